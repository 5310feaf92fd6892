"""The TRL release every run directory whileai writes is for (the catalogue, the checks, the report
and the run directory's README all name this one)."""

VERSION = "1.16.0"
TARGET = f"trl {VERSION}"
