"""Counts of a study's items and assignments, kept as they are written (issue 42).

The home, study and queue pages showed counts over every item and assignment of a study
(items by kind and round, coded once, fully coded, complete; each coder's assignments by
status and seconds spent), counted on every view: 6 to 12 times slower at 1,000,000 items
than at 1,000. Here they are kept instead, by PostgreSQL itself: statement-level triggers
on the item and assignment tables add, for every statement that changes rows, one delta
row per count it changed (`Tally`: study, name, +n or -n). Nothing that writes items or
assignments can skip them (the queue, imports by COPY, restores, the admin, a bulk
update), and a statement that changes no counted field adds nothing. A count is the sum
of its deltas; when a study has gathered more than COMPACT_AT of them, the reader folds
them into one row per name in one statement (rows committed meanwhile stay, as deltas).
The agreement jobs, which follow the coders' submissions, read them too, so the deltas
stay few while coders work even when nobody opens a page.

The names (`item_names`, `assignment_names`, and the same in SQL below):
  items:<round>:<kind>   alive items of the round whose document is of that kind
  sample:<round>         alive items of the round in the reliability sample
  complete:main          alive main-round items with taken >= target
  taken:<k>              items (deleted ones too) that k coders have taken: coded once is
                         k >= 1, fully coded k >= the study's overlap, whatever it is now
  work:<coder>:<status>  the coder's assignments in that status
  spent:<coder>:<s>      the coder's assignments whose first revision took s seconds
  disagreements:<round>  stored disagreements (the review list's rows) of alive items of
                         the round; decided:<round> those of them decided
The disagreements' counts depend on their item's state too: the disagreements' trigger
reads it, and the items' trigger adds or takes away an item's disagreements when its state
changes. Both kinds of writers lock the item's row first (settle_locked, the rebuild, the
items' curation), so the two never interleave on one item.

On SQLite (the embedded default, a small study) `tallies` counts the same names from
the tables on each call: there are no triggers to keep them, and counting is cheap there.

Migration 0039 installs TRIGGERS and BACKFILL from this module. A change to the names or
to what a trigger counts needs a migration of its own that runs DROP_TRIGGERS, TRIGGERS,
and recounts (empty coding_tally, then BACKFILL); `manage.py recount_tallies` checks a study.
"""

from django.db import connection, models
from django.db.models import Count, Q

COMPACT_AT = 2000


class Tally(models.Model):
    """One delta of one count of one study (see the module). No foreign key: deltas are
    written by triggers while a study's items are deleted, before the study is; the
    study's own delete trigger removes its deltas."""

    study_id = models.IntegerField()
    name = models.CharField(max_length=64)
    n = models.BigIntegerField()

    class Meta:
        indexes = [models.Index(fields=["study_id", "name"], name="tally_study_name")]

    def __str__(self):
        return f"{self.study_id} {self.name} {self.n:+d}"


def item_names(round, kind, alive, sample, taken, target):
    """The counts an item adds one to (the module's names)."""
    names = [f"taken:{taken}"]
    if alive:
        names.append(f"items:{round}:{kind}")
        if sample:
            names.append(f"sample:{round}")
        if round == "main" and taken >= target:
            names.append("complete:main")
    return names


def assignment_names(coder, status, spent):
    names = [f"work:{coder}:{status}"]
    if spent is not None:
        names.append(f"spent:{coder}:{spent}")
    return names


def disagreement_names(round, decided):
    return [f"disagreements:{round}", *([f"decided:{round}"] if decided else [])]


def kept():
    """Whether the database keeps the tallies (PostgreSQL, with the triggers below)."""
    return connection.vendor == "postgresql"


def tallies(study):
    """{name: count} of the study, zeros left out."""
    if not kept():
        return live_tallies(study)
    with connection.cursor() as cursor:
        cursor.execute(READ, [study.pk, study.pk, COMPACT_AT, study.pk, study.pk])
        return {name: int(n) for name, n in cursor.fetchall() if n}


def live_tallies(study):
    """The same counts, counted from the tables now (SQLite; and what the tests hold the
    kept ones to)."""
    from coding.models import Assignment, Item, StoredDisagreement

    counts = {}
    groups = (Item.objects.filter(study=study).order_by()
              .values_list("round", "document__kind", "in_reliability_sample", "taken",
                           "target")
              .annotate(alive=Count("pk", filter=Q(deleted_at__isnull=True)), n=Count("pk")))
    for round, kind, sample, taken, target, alive, n in groups:
        for name in item_names(round, kind, False, sample, taken, target):
            counts[name] = counts.get(name, 0) + n
        if alive:
            for name in item_names(round, kind, True, sample, taken, target)[1:]:
                counts[name] = counts.get(name, 0) + alive
    for coder, status, spent, n in (Assignment.objects.filter(study=study).order_by()
                                    .values_list("coder", "status", "first_seconds_spent")
                                    .annotate(n=Count("*"))):
        for name in assignment_names(coder, status, spent):
            counts[name] = counts.get(name, 0) + n
    for round, decided, n in (StoredDisagreement.objects
                              .filter(study=study, item__deleted_at__isnull=True).order_by()
                              .values_list("item__round", "decided").annotate(n=Count("*"))):
        for name in disagreement_names(round, decided):
            counts[name] = counts.get(name, 0) + n
    return counts


def recount(study):
    """Put the study's kept tallies right from the tables (after a repair by hand)."""
    if not kept():
        return
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM coding_tally WHERE study_id = %s", [study.pk])
        Tally.objects.bulk_create(Tally(study_id=study.pk, name=name, n=n)
                                  for name, n in live_tallies(study).items())


# The counts, read in one statement that also folds the study's deltas into one row per
# name once there are more than COMPACT_AT of them: deleted and their sums inserted at
# once, so no reader sees them twice or not at all, and deltas committed meanwhile stay as
# they are. The SELECT reads the rows as they were when the statement began (the folding
# is not visible to it), which sum to the same counts. One statement on every read, so a
# page's queries do not depend on when the deltas were last folded.
READ = """
WITH gone AS (
    DELETE FROM coding_tally WHERE study_id = %s
    AND (SELECT COUNT(*) FROM coding_tally WHERE study_id = %s) > %s
    RETURNING name, n),
folded AS (
    INSERT INTO coding_tally (study_id, name, n)
    SELECT %s, name, SUM(n) FROM gone GROUP BY name HAVING SUM(n) <> 0)
SELECT name, SUM(n) FROM coding_tally WHERE study_id = %s GROUP BY name
"""

# The names in SQL, as item_names, assignment_names and disagreement_names give them, for
# a row `r`, each with how much it adds: one, or for an item its stored disagreements.
ITEM_NAMES = """
SELECT r.study_id, x.name, x.w FROM {rows} r JOIN ingest_document d ON d.id = r.document_id
CROSS JOIN LATERAL (VALUES
    ('taken:' || r.taken, true, 1),
    ('items:' || r.round || ':' || d.kind, r.deleted_at IS NULL, 1),
    ('sample:' || r.round, r.deleted_at IS NULL AND r.in_reliability_sample, 1),
    ('complete:main', r.deleted_at IS NULL AND r.round = 'main' AND r.taken >= r.target, 1)
) x(name, counted, w) WHERE x.counted
UNION ALL
SELECT r.study_id, x.name, x.w FROM {rows} r
CROSS JOIN LATERAL (SELECT COUNT(*) AS n, COUNT(*) FILTER (WHERE s.decided) AS decided
                    FROM coding_storeddisagreement s WHERE s.item_id = r.id) s
CROSS JOIN LATERAL (VALUES
    ('disagreements:' || r.round, s.n), ('decided:' || r.round, s.decided)
) x(name, w) WHERE r.deleted_at IS NULL AND x.w > 0
"""
ASSIGNMENT_NAMES = """
SELECT r.study_id, x.name, 1 FROM {rows} r
CROSS JOIN LATERAL (VALUES
    ('work:' || r.coder_id || ':' || r.status, true),
    ('spent:' || r.coder_id || ':' || r.first_seconds_spent, r.first_seconds_spent IS NOT NULL)
) x(name, counted) WHERE x.counted
"""
DISAGREEMENT_NAMES = """
SELECT r.study_id, x.name, 1 FROM {rows} r JOIN coding_item i ON i.id = r.item_id
CROSS JOIN LATERAL (VALUES
    ('disagreements:' || i.round, true), ('decided:' || i.round, r.decided)
) x(name, counted) WHERE x.counted AND i.deleted_at IS NULL
"""


def _trigger_sql(table, names, watched):
    """The functions and three triggers that keep `table`'s tallies. Inserts and deletes
    are counted once per statement, from its transition table (a COPY of a million rows
    is one INSERT of their sums); an update once per row, and only when it changes one of
    the `watched` columns the names read: a lease extended or a draft saved, most of the
    updates on the coders' path, costs nothing."""
    deltas = """
        INSERT INTO coding_tally (study_id, name, n)
        SELECT study_id, name, SUM(d) FROM ({parts}) c(study_id, name, d)
        GROUP BY study_id, name HAVING SUM(d) <> 0;"""

    def plus(rows):
        return f"SELECT study_id, name, w FROM ({names.format(rows=rows)}) a(study_id, name, w)"

    def minus(rows):
        return f"SELECT study_id, name, -w FROM ({names.format(rows=rows)}) b(study_id, name, w)"

    changed = " OR ".join(f"OLD.{c} IS DISTINCT FROM NEW.{c}" for c in watched)
    return f"""
CREATE FUNCTION {table}_tallied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN {deltas.format(parts=plus("added"))}
    ELSE {deltas.format(parts=minus("removed"))}
    END IF;
    RETURN NULL;
END $$;
CREATE FUNCTION {table}_tallied_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN {deltas.format(parts=plus("(SELECT (NEW).*)") + " UNION ALL " + minus("(SELECT (OLD).*)"))}
    RETURN NULL;
END $$;
CREATE TRIGGER {table}_tally_insert AFTER INSERT ON {table}
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION {table}_tallied();
CREATE TRIGGER {table}_tally_update AFTER UPDATE ON {table}
    FOR EACH ROW WHEN ({changed}) EXECUTE FUNCTION {table}_tallied_row();
CREATE TRIGGER {table}_tally_delete AFTER DELETE ON {table}
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION {table}_tallied();
"""


# The columns each table's names read: an update that changes none of them counts nothing.
WATCHED = {
    "coding_item": ("study_id", "document_id", "round", "deleted_at", "in_reliability_sample",
                    "taken", "target"),
    "coding_assignment": ("study_id", "coder_id", "status", "first_seconds_spent"),
    "coding_storeddisagreement": ("study_id", "item_id", "decided"),
}
TABLES = {"coding_item": ITEM_NAMES, "coding_assignment": ASSIGNMENT_NAMES,
          "coding_storeddisagreement": DISAGREEMENT_NAMES}
TRIGGERS = "".join(_trigger_sql(table, names, WATCHED[table])
                   for table, names in TABLES.items()) + """
CREATE FUNCTION coding_study_untallied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM coding_tally WHERE study_id IN (SELECT id FROM removed);
    RETURN NULL;
END $$;
CREATE TRIGGER coding_study_tally_delete AFTER DELETE ON coding_study
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION coding_study_untallied();
"""
DROP_TRIGGERS = """
DROP TRIGGER IF EXISTS coding_study_tally_delete ON coding_study;
DROP FUNCTION IF EXISTS coding_study_untallied();
""" + "".join(f"""
DROP TRIGGER IF EXISTS {t}_tally_insert ON {t};
DROP TRIGGER IF EXISTS {t}_tally_update ON {t};
DROP TRIGGER IF EXISTS {t}_tally_delete ON {t};
DROP FUNCTION IF EXISTS {t}_tallied();
DROP FUNCTION IF EXISTS {t}_tallied_row();
""" for t in TABLES)
# The counts of every study there already is, when the triggers are installed (an item's
# disagreements are counted from the items' side only).
BACKFILL = "".join(f"""
INSERT INTO coding_tally (study_id, name, n)
SELECT study_id, name, SUM(w) FROM ({names.format(rows=table)}) t(study_id, name, w)
GROUP BY study_id, name;""" for table, names in TABLES.items()
    if table != "coding_storeddisagreement")
