"""whileai: compile OPD / OPSD / GRPO specs into prime-rl and TRL run files."""
