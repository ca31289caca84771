"""Judging room: the LLM judge and its sessions, the SECQUE panel, the tournament, pairwise
preferences, the fatal-flaw screen, common evidence and re-scoring — the services that call a
model or write scores. Pure scoring lives in `scoring/`, claim audits in `audits/`, failure
cases in `reports/`."""
