"""The item browser: every item of a study with its state, filters and keyset paging
(`browse`), an item's whole history (`history`), and the owner's bulk actions on items:
exclude with a reason and restore, release held, return to the pool, move to
calibration, add to the reliability sample (`curate`), each audited.

Owners and adjudicators use it; a person who also codes in the study and reads the list
through another role has read others' work (coding.labeling.codings.record_reads).
"""
