#!/usr/bin/env python3
"""Bytes used by each table of a SQLite file (its indexes counted with it), for bench/lib/scale.mjs.

Reads the file read-only while workerd may still hold it (SQLite readers see committed pages, WAL
included). Prints JSON: {"pageSize", "pageCount", "freePages", "tables": {table: {"bytes", "payload",
"rows"}}}. `bytes` is whole pages (what the file grows by), `payload` the bytes of content in them.
Needs Python's sqlite3 module with the dbstat virtual table (Debian's has it).
"""
import json
import sqlite3
import sys

path = sys.argv[1]
db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
owner = {name: table for name, table in db.execute("SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index')")}
tables = {}
for name, pages, payload in db.execute("SELECT name, SUM(pgsize), SUM(payload) FROM dbstat GROUP BY name"):
    table = owner.get(name, name)
    entry = tables.setdefault(table, {"bytes": 0, "payload": 0, "rows": None})
    entry["bytes"] += pages
    entry["payload"] += payload
for table, entry in tables.items():
    if table in owner and owner[table] == table and not table.startswith("sqlite_"):
        try:
            entry["rows"] = db.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0]
        except sqlite3.Error:
            pass
print(json.dumps({
    "pageSize": db.execute("PRAGMA page_size").fetchone()[0],
    "pageCount": db.execute("PRAGMA page_count").fetchone()[0],
    "freePages": db.execute("PRAGMA freelist_count").fetchone()[0],
    "tables": tables,
}))
