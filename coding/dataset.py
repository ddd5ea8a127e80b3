"""Load an exported bundle into pandas with the dtypes its data dictionary describes.

    from load import load   # this file, as every bundle carries it (load.py)
    tables = load("study-12-wide-long.zip")   # {table name: DataFrame}

Inside the workbench it is `coding.dataset.load`. It imports nothing but the standard
library and pandas (with pyarrow for Parquet), so it runs wherever the bundle goes.

Integers and numbers become nullable Int64 / Float64, booleans nullable boolean,
datetimes UTC timestamps, and columns with categories pandas categoricals in
codebook order (ordered where the question's level is ordinal). Empty cells are
missing values; the `__status` / `status` columns say whether that means "not
applicable", "missing", "undecided" (a disagreement waiting) or "pending" (the item's
codings are not all in). Text that the CSV writer guarded against
spreadsheet formulas (a ' before =, +, -, @ …) comes back as it was. Needs only pandas and
pyarrow.
"""

import io
import json
import zipfile

import pandas as pd


def load(path):
    with zipfile.ZipFile(path) as bundle:
        package = json.loads(bundle.read("datapackage.json"))
        return {resource["name"]: _read(bundle, resource) for resource in package["resources"]}


def data_dictionary(path):
    with zipfile.ZipFile(path) as bundle:
        return json.loads(bundle.read("datapackage.json"))


def _read(bundle, resource):
    fields = resource["schema"]["fields"]
    raw = bundle.read(resource["path"])
    if resource["format"] == "parquet":
        frame = pd.read_parquet(io.BytesIO(raw))
    elif resource["format"] == "csv":
        frame = pd.read_csv(io.BytesIO(raw), dtype=str, keep_default_na=False, na_values=[""])
        # The ' the writer put before text a spreadsheet would run as a formula.
        for f in fields:
            if f["type"] == "string":
                frame[f["name"]] = frame[f["name"]].str.replace(r"^'", "", n=1, regex=True)
            # A key that reads as a number carries a prefix in CSV alone (arXiv:2501.90100).
            if f.get("csvTextPrefix"):
                frame[f["name"]] = frame[f["name"]].str.removeprefix(f["csvTextPrefix"])
    else:
        rows = [json.loads(line) for line in raw.decode("utf-8").splitlines() if line]
        frame = pd.DataFrame(rows, columns=[f["name"] for f in fields])
    return pd.DataFrame({f["name"]: _typed(frame[f["name"]], f) for f in fields})


def _typed(column, field):
    kind = field["type"]
    if kind == "integer":
        return pd.to_numeric(column).astype("Int64")
    if kind == "number":
        return pd.to_numeric(column).astype("Float64")
    if kind == "boolean":
        return column.map(_boolean, na_action="ignore").astype("boolean")
    if kind == "datetime":
        return pd.to_datetime(column, utc=True, format="ISO8601").dt.as_unit("us")
    if field.get("categories"):
        return pd.Categorical(column, categories=field["categories"],
                              ordered=field.get("categoriesOrdered", False))
    return column.astype("string")


def _boolean(value):
    if isinstance(value, str):
        return {"true": True, "false": False}[value.lower()]
    return bool(value)
