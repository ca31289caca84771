"""Retrieval room: filing and market-data chunks, embeddings, LanceDB tables, hybrid search."""
