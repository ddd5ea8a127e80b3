"""Pure parsers, one module per format: bytes or files in, records out.

Each yields `ingest.records.DocumentRecord` (or `Deletion`) for a good record and
`RecordError` for a bad one, and never raises on one bad record. No database, no
network: the live clients in `ingest.clients` hand their pages to these same parsers.
"""
