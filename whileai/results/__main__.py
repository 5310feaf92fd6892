"""`python -m whileai.results > schemas/results.schema.json` regenerates the schema."""

import sys

from whileai.results.document import Results
from whileai.schemadoc import document, text

sys.stdout.write(text(document(Results)))
