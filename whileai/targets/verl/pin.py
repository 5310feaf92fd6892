"""The verl release every run directory whileai writes is for (the report, the README, the
check and `pip install` name this one)."""

VERSION = "0.9.1"
TARGET = f"verl=={VERSION}"
