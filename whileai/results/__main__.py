"""`python -m whileai.results > schemas/results.schema.json` regenerates the schema."""

import sys

from whileai.results.model import schema_text

sys.stdout.write(schema_text())
