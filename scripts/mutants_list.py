"""The mutants scripts/mutants.py plants: small bugs in the behaviours the README promises, each a
snippet of one file replaced by another, with what it breaks and the few tests that should catch
it (run in that order, stopping at the first failure). A mutant whose `original` is no longer in its
file once is reported stale: mend it with the change that moved it (tests/test_mutants.py)."""

from __future__ import annotations

from typing import NamedTuple


class Mutant(NamedTuple):
    name: str
    file: str
    original: str
    mutated: str
    breaks: str
    tests: tuple[str, ...]


VALUES = "tests/targets/test_values.py"
VERDICTS = "tests/rehearse/test_verdicts.py"

MUTANTS: list[Mutant] = [
    # -- no silent drops: the files hold what the report says ------------------------------------
    Mutant("seed-written-as-0", "whileai/targets/prime_rl/fieldmap.py",
           'To("seed", "inference.vllm.seed", when=',
           'To("seed", "inference.vllm.seed", lambda r: 0, when=',
           "prime-rl's row says it reads the seed but writes 0", (VALUES,)),
    Mutant("row-reads-another-field", "whileai/targets/verl/fieldmap.py",
           'To("prompt_tokens", "data.max_prompt_length"),',
           'To("prompt_tokens", "data.max_prompt_length", lambda r: r.method.max_tokens),',
           "verl's prompt_tokens row writes max_tokens", (VALUES,)),
    Mutant("emitter-drops-a-read", "whileai/targets/verl/compile.py",
           "(script.word(k, v, k in added) for k, v in self.words)",
           "(script.word(k, v, k in added) for k, v in self.words if k != 'data.seed')",
           "run.sh loses data.seed after the report listed it", (VALUES,)),
    Mutant("holdout-not-capped", "whileai/targets/verl/fieldmap.py",
           "return holdout if r.eval.examples < 0 else min(r.eval.examples, holdout)",
           "return holdout",
           "eval.examples no longer reaches data.val_max_samples", (VALUES,)),
    Mutant("extra-row-does-not-win", "whileai/targets/fieldmap.py",
           "    later = [r.path for r in extra if isinstance(r, Fix) and r.when(run)]",
           "    later: list[str] = []",
           "a stage's extra Fix no longer replaces the map's read in the report",
           ("tests/targets/test_stages.py", VALUES)),
    # -- compile --check and bad input -----------------------------------------------------------
    Mutant("exit-0-after-refusing-check", "whileai/cli/commands.py",
           "            \"to write the files unchecked)\")\n        raise SystemExit(2)",
           "            \"to write the files unchecked)\")\n        raise SystemExit(0)",
           "compile --check exits 0 when the target's own check refuses",
           ("tests/targets/test_toy_target.py",)),
    Mutant("unknown-spec-field-accepted", "whileai/spec/run.py",
           'model_config = ConfigDict(extra="forbid", frozen=True, strict=True, populate_by_name=True,',
           'model_config = ConfigDict(extra="ignore", frozen=True, strict=True, populate_by_name=True,',
           "a typo in a spec's top-level field is dropped silently",
           ("tests/test_hardening.py", "tests/cli/test_cli.py")),
    Mutant("override-contradiction-passes", "whileai/targets/pipeline.py",
           "    if run.overrides:\n        check_story(",
           "    if False:\n        check_story(",
           "an override that contradicts the spec (lora=false, a LoRA key set) compiles",
           ("tests/targets/test_story.py",)),
    Mutant("trl-batch-divisibility-unchecked", "whileai/targets/trl/batch.py",
           "        if batch % n_gen:", "        if False:",
           "TRL's incomplete prompt groups pass compile (TRL refuses them at start)",
           ("tests/targets/trl/test_trl_batch_refused.py", "tests/targets/trl/test_trl_compile.py")),
    # -- verl: quoting and the teacher's pool ----------------------------------------------------
    Mutant("verl-quote-escaping-dropped", "whileai/targets/verl/script.py",
           """lambda m: m[1] * 2 + ("\\\\" + quote if m[2] else ""), text) + quote""",
           """lambda m: m[1] + (quote if m[2] else ""), text) + quote""",
           "a value holding ' or \\ reaches Hydra unescaped",
           ("tests/targets/verl/test_bash_hydra.py", "tests/targets/verl/test_paths_quoted.py")),
    Mutant("teacher-pool-without-nodes", "whileai/targets/verl/knobs.py",
           "set_replicas or per * nnodes_ // tp_", "set_replicas or per // tp_",
           "a teacher pool over several nodes is sized as one node's replicas",
           ("tests/targets/verl/test_verl_pool_nodes.py", "tests/targets/verl/test_verl_pools.py")),
    # -- the rehearsal's verdict -----------------------------------------------------------------
    Mutant("any-exit-0-is-ok-prime-rl", "whileai/targets/prime_rl/rehearse/logs.py",
           "    if rc == 0 and len(facts) >= steps:", "    if rc == 0:",
           "a rehearsal that exits 0 after too few steps passes", (VERDICTS,)),
    Mutant("any-exit-0-is-ok-verl", "whileai/targets/verl/rehearse/run.py",
           "    if missing:  # exit 0", "    if False:  # exit 0",
           "verl's stage that exits 0 short of its steps passes", (VERDICTS,)),
    Mutant("result-ok-with-stages-left", "whileai/rehearse/verdict.py",
           "            and len(self.verdicts) == len(self.stages)\n", "",
           "a two-stage rehearsal stopped after its first stage is ok", (VERDICTS,)),
    Mutant("timeout-not-a-failure", "whileai/targets/prime_rl/rehearse/logs.py",
           'why = f"no verdict within the timeout ({seconds:.0f} s)" if rc is None else f"rl exited {rc}"',
           'why = f"rl exited {rc}"',
           "a rehearsal past its deadline is not said to be one", (VERDICTS,)),
    Mutant("cause-order-box-last", "whileai/targets/prime_rl/rehearse/logs.py",
           '    order.insert(0, (where / "rl.log", "box"))', '    order.append((where / "rl.log", "box"))',
           "the config loader's box is quoted after the exceptions it caused", (VERDICTS,)),
    Mutant("failed-step-unread-verl", "whileai/targets/verl/rehearse/run.py",
           "    bad = next(((n, s) for n, s in steps if not s.ok), None)", "    bad = None",
           "verl's failing step is not the cause quoted", (VERDICTS,)),
    Mutant("supervisor-kills-the-leader-only", "whileai/rehearse/supervise.py",
           "        os.killpg(pid, sig)  # the session's group id is the leader's pid",
           "        os.kill(pid, sig)  # the session's group id is the leader's pid",
           "a stopped rehearsal leaves its children running",
           ("tests/rehearse/test_rehearse.py::test_supervisor_stops_a_tree_that_ignores_sigterm",)),
    # -- the ground: secrets, files, layers ------------------------------------------------------
    Mutant("secrets-not-masked", "whileai/errors.py",
           "    return bound(escape(mask(text)), LINE_LIMIT)",
           "    return bound(escape(text), LINE_LIMIT)",
           "an error line or a quoted log line carries an API key",
           ("tests/test_secretscan.py", "tests/test_hardening.py")),
    Mutant("secret-spans-not-found", "whileai/secretscan.py",
           "    spans = sorted((a, b) for a, b, _ in _spans(text))\n    if not spans:",
           "    spans = sorted((a, b) for a, b, _ in _spans(text))\n    if True:",
           "mask() returns the text with its secret", ("tests/test_secretscan.py",)),
    Mutant("atomic-write-not-renaming", "whileai/files/atomic.py",
           "    try:\n        os.replace(tmp, dest)\n    except BaseException:",
           "    try:\n        dest.write_text(text, encoding='utf-8')\n        tmp.unlink()\n"
           "    except BaseException:",
           "a manifest or metrics file is rewritten in place: a reader can see half of it",
           ("tests/files/test_atomic.py", "tests/launch/test_launch_manifest.py")),
    Mutant("commit-not-undone", "whileai/files/atomic.py",
           "    except OSError as e:\n        _undo(temps, done, made)\n", "    except OSError as e:\n",
           "a failure halfway through writing a run leaves part of it", ("tests/files/test_write.py",)),
    Mutant("refused-check-keeps-the-write", "whileai/files/atomic.py",
           "        except Exception:\n            _undo(temps, done, made)\n            raise",
           "        except Exception:\n            _drop(done)\n            raise",
           "compile --check -o leaves the files its target's check refused",
           ("tests/targets/test_toy_target.py",)),
    Mutant("upward-import", "whileai/spec/values.py",
           "from __future__ import annotations\n",
           "from __future__ import annotations\n\nimport whileai.cli.fail  # noqa: F401\n",
           "the spec (the bottom of the house) imports the CLI (its top)", ("tests/test_layers.py",)),
    Mutant("field-map-drop-unsaid", "whileai/targets/fieldmap.py",
           "            if current is not None:\n                out.ignores.append(",
           "            if False:\n                out.ignores.append(",
           "an ignored field is no longer said to be ignored", ("tests/targets/test_coverage.py",)),
    # -- the teacher every way (issue 41) and its signal on a run (issue 42) ----------------------
    Mutant("measured-mismatch-only-warned", "whileai/rules/tokenizers.py",
           '    if got.differ and got.basis == "measured":', "    if False:",
           "prime-rl and verl compile a teacher whose tokenizer files differ from the student's",
           ("tests/rules/test_cross_tokenizer.py", "tests/vocab/test_tokcheck.py")),
    Mutant("served-teacher-loaded-in-process", "whileai/targets/trl/teacher.py",
           '(urlsplit(m.teacher.url).hostname or "") != PLACEHOLDER', "False",
           "TRL loads a teacher the spec names at a server instead of querying it",
           ("tests/targets/trl/test_trl_teachers.py",)),
    Mutant("teacher-dropped-let-through", "whileai/targets/verl/gpus.py",
           'if run.job != "main_ppo" or run.get("distillation.enabled") is not True or not named',
           'if True or not named',
           "a verl config that silently loses teacher_model beside a named teacher passes",
           ("tests/targets/verl/test_verl_mixture.py", "tests/targets/verl/test_lax.py")),
    Mutant("run-signal-reversed", "whileai/tokenview/runteacher.py",
           "sig = [float(trainer[i]) - got.logprobs[i] for i in at]",
           "sig = [got.logprobs[i] - float(trainer[i]) for i in at]",
           "inspect --run's signal is teacher minus student",
           ("tests/tokenview/test_inspect_run_teacher.py",)),
    Mutant("teacher-flags-ignored-without-teacher", "whileai/tokenview/runapp.py",
           "        if not self.wanted:", "        if False:",
           "--pick and --per-step without a teacher change nothing and say nothing",
           ("tests/tokenview/test_inspect_run_teacher.py",)),
    # -- Modal (issue 43) -----------------------------------------------------------------------
    Mutant("modal-server-error-fails-the-arm", "whileai/launch/modal_errors.py",
           "    mx.ServiceError, mx.InternalError, mx.ResourceExhaustedError, mx.NotFoundError,",
           "    mx.NotFoundError,",
           "a Modal server error marks a running arm failed for good",
           ("tests/launch/test_launch_modal.py", "tests/launch/test_modal_recipe.py")),
]
