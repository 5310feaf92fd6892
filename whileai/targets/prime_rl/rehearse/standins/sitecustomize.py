"""Imported at start-up by every process of a rehearsal (its folder leads PYTHONPATH there, and
nowhere else): tqdm's class lock is created once, up front. The offline copy gives each source
local rows, and datasets resolves local data files through tqdm's `thread_map`, which creates
the class lock when it is missing and deletes it on leaving; a mixture's sources load on
threads at once, so one thread's delete met another's use (`'tqdm' object has no attribute
'_lock'`). Hub files take datasets' sequential path, so a real run does not meet this."""

try:
    from tqdm import std

    std.tqdm.get_lock()
except Exception:  # noqa: BLE001 - a process without tqdm (a harness's own environment)
    pass
