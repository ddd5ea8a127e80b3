"""Live clients (arXiv API, arXiv OAI-PMH, GitHub REST) on httpx.

They fetch pages politely and hand the raw bytes or JSON to the parsers in
`ingest.sources`. Every wait goes through an injected `sleep` and `clock`, and
every request through an injectable httpx transport, so tests never wait or
touch the network.
"""
