"""Rich tables that never split what people copy.

A table's cells wrap at spaces only: each column is at least as wide as the longest word in it (a
key path, a model id, a URL), so rich never has to fold a word. Where those widths do not fit the
terminal, `whole_table` answers None and the caller prints its rows as lines instead (each row on
a line of its own, wrapped between words: whileai.report.wrap).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.table import Table
from rich.text import Text

from whileai.report.wrap import breaks, glue

GAP = 2  # columns between two cells: box=None, padding (0, 1)


def widths(cells: Sequence[Sequence[str]], room: int, ratios: Sequence[int] = ()) -> list[int] | None:
    """Column widths within `room` where every word of every cell fits whole (None: they cannot).
    Each column starts at its longest word; the spare room goes to the columns whose lines are
    longer than that, in proportion to `ratios`."""
    n = len(cells[0]) if cells else 0
    low = [max((len(w) for row in cells for w in glue(row[i], room).split()), default=1) for i in range(n)]
    high = [max((len(line) for row in cells for line in row[i].split("\n")), default=1) for i in range(n)]
    spare = room - GAP * (n - 1) - sum(low)
    if spare < 0:
        return None
    out, ratio = list(low), list(ratios) or [1] * n
    while spare > 0:
        short = [i for i in range(n) if out[i] < high[i]]
        if not short:
            break
        total = sum(ratio[i] for i in short)
        for i in short:
            add = min(high[i] - out[i], max(1, spare * ratio[i] // total), spare)
            out[i] += add
            spare -= add
    return out


def whole_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[Text]],
    room: int,
    ratios: Sequence[int] = (),
    **table: Any,
) -> Table | None:
    """A table of `rows` (one Text per cell) whose words all stay whole within `room` columns, or
    None where they cannot (the caller prints the rows as lines)."""
    sizes = widths([list(headers), *[[t.plain for t in row] for row in rows]], room, ratios)
    if sizes is None:
        return None
    t = Table(box=None, pad_edge=False, **table)
    for head, size in zip(headers, sizes, strict=True):
        t.add_column(head, width=size, overflow="fold")
    for row in rows:  # each cell broken here, a flag or `key =` kept with its value (rich would part them)
        cells = [cell.copy() for cell in row]
        for cell, size in zip(cells, sizes, strict=True):
            cell.plain = breaks(cell.plain, size)
        t.add_row(*cells)
    return t
