"""Runs room: the evidence conditions, TELeR prompts, the streaming runner and the batch engines
(local and Ray), over the workspace's records and the models room's resolved models."""
