"""Results of paired arms: statistics, results.json, the plot.

    res = build(manifest)                  # dict matching schemas/results.schema.json
    write_results("runs/rt-1/results.json", res)
    plot(res, "runs/rt-1/results.png")

numpy, scipy and matplotlib (the `results` extra) load only when statistics or the plot run.
"""

from __future__ import annotations

from whileai.results.build import build, versions, write_results
from whileai.results.document import Results
from whileai.results.plot import plot

__all__ = ["Results", "build", "plot", "versions", "write_results"]
