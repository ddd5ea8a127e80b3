"""Memory stays flat in file size: the real snapshot is several GB and millions of lines."""

import gc
import io
import json
import tracemalloc

from ingest.imports import run_import
from ingest.models import Document
from ingest.sources import oai_pmh


def write_snapshot(path, n):
    # Small records: tracemalloc slows every allocation, and the point is the
    # number of lines, not their length (a long line is tested on its own).
    with open(path, "w") as file:
        for i in range(n):
            file.write(json.dumps({
                "id": f"2510.{i:05d}", "title": f"Invented Paper {i}", "abstract": "Invented.",
                "categories": "cs.LG", "authors_parsed": [["Example", "Ann", ""]],
                "versions": [{"version": "v1", "created": "Wed, 1 Oct 2025 10:00:00 GMT"}],
            }) + "\n")
    return path


def peak_bytes_of_import(path):
    gc.collect()
    tracemalloc.start()
    try:
        counts = run_import({"format": "arxiv_snapshot_file", "path": str(path),
                             "batch_size": 500})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return counts, peak


def test_importing_a_snapshot_takes_memory_that_does_not_grow_with_the_file(db, tmp_path):
    # 2 and 20 batches of 500: a file held whole (or one object per line kept) grows
    # tenfold, megabytes beyond the allowance below; more lines only cost time.
    small = write_snapshot(tmp_path / "small.jsonl", 1_000)
    large = write_snapshot(tmp_path / "large.jsonl", 10_000)
    small_counts, small_peak = peak_bytes_of_import(small)
    Document.objects.all().delete()
    large_counts, large_peak = peak_bytes_of_import(large)
    assert (small_counts["added"], large_counts["added"]) == (1_000, 10_000)
    # Ten times the lines, the same peak: one batch at a time is held, never the file.
    assert large_peak < small_peak * 1.3 + 512 * 1024, (small_peak, large_peak)
    assert large_peak < 8 * 1024 * 1024  # about 2 MB measured, with 500-record batches


def oai_page(n):
    records = b"".join(
        b'<record><header status="deleted"><identifier>oai:arXiv.org:2510.%05d</identifier>'
        b"<datestamp>2025-10-03</datestamp><setSpec>cs:cs:LG</setSpec></header></record>" % i
        for i in range(n))
    return (b'<?xml version="1.0" encoding="UTF-8"?>'
            b'<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><ListRecords>'
            + records + b"</ListRecords></OAI-PMH>")


def peak_bytes_of_reading(body):
    gc.collect()
    tracemalloc.start()
    try:
        read = sum(1 for _ in oai_pmh.read_response(io.BytesIO(body), "page"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return read, peak


def test_reading_xml_takes_memory_that_does_not_grow_with_the_document():
    small, small_peak = peak_bytes_of_reading(oai_page(1_000))
    large, large_peak = peak_bytes_of_reading(oai_page(10_000))
    assert (small, large) == (1_000, 10_000)
    # Each record is dropped from the tree once read, so the tree never holds the page.
    assert large_peak < small_peak * 1.3 + 256 * 1024, (small_peak, large_peak)
