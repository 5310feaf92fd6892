"""whileai.targets.verl.runsh: a run.sh read into its verl commands and their Hydra overrides."""

from pathlib import Path

from whileai.targets.verl.runsh import mentions_verl, parse, read

RUNS = Path(__file__).resolve().parents[2] / "fixtures" / "verl" / "runs"


def test_whileai_shape_one_override_a_line():
    [cmd] = read(RUNS / "grpo" / "run.sh")
    assert (cmd.kind, cmd.module, cmd.launcher) == ("main_ppo", "verl.trainer.main_ppo", ("python3", "-m"))
    assert cmd.overrides[0] == "algorithm.adv_estimator=grpo"
    assert "trainer.logger=[\"console\"]" in cmd.overrides  # the shell's quotes removed
    assert cmd.overrides[-1] == "trainer.total_training_steps=10"
    assert len(cmd.overrides) == 21 and cmd.line == 6 and cmd.unknown == ()


def test_a_directory_reads_its_run_sh():
    assert read(RUNS / "grpo") == read(RUNS / "grpo" / "run.sh")


def test_sft_two_jobs_and_the_conversion_between():
    gen, sft = read(RUNS / "sft")
    assert gen.kind == "main_generation_server"
    assert "+data.output_path=samples/responses.parquet" in gen.overrides
    assert sft.kind == "sft_trainer" and sft.launcher[0] == "torchrun" and sft.launcher[-1] == "-m"
    assert "--nproc_per_node=8" in sft.launcher and sft.overrides[0] == "data.train_files=data/sft.parquet"


def test_verl_example_style_variables_arrays_and_arithmetic():
    [cmd] = read(RUNS / "example-style" / "run.sh", env={"HOME": "/home/u"})
    o = cmd.overrides
    assert o[0] == "algorithm.adv_estimator=grpo"
    assert "data.train_files=['/home/u/data/gsm8k/train.parquet']" in o  # "${DATA[@]}", then $DATA_DIR
    assert "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=10240" in o  # 4 * (512 + 2048)
    assert "actor_rollout_ref.rollout.name=vllm" in o  # the comment after "vllm" dropped
    assert "distillation.teacher_models.teacher_model.model_path=Qwen/Qwen3-8B" in o
    assert o[-1] == "trainer.nnodes=1"  # "$@" is nothing; `2>&1 | tee train.log` is no override
    assert not any(w.startswith("#") or "tee" in w for w in o)
    assert cmd.unknown == ()


def test_an_unset_variable_is_kept_and_named():
    [cmd] = read(RUNS / "example-style" / "run.sh")  # no environment: $HOME is unknown
    assert "data.train_files=['$HOME/data/gsm8k/train.parquet']" in cmd.overrides
    assert cmd.unknown == ("$HOME",)
    [cmd] = read(RUNS / "example-style" / "run.sh", env={"HOME": "/h", "DATA_DIR": "/d"})
    assert "data.val_files=['/d/test.parquet']" in cmd.overrides  # ${DATA_DIR:-...} keeps a set value


def test_quotes_escapes_and_hydra_options():
    text = """
X='a b'  # single quotes: one value
python3 -m verl.trainer.main_ppo --config-path=config --config-name 'ppo_megatron_trainer' \\
    trainer.experiment_name="$X" data.tokenizer=\\$literal \\
    'trainer.logger=["console"]' +trainer.extra=${Y:-7}; echo done
"""
    [cmd] = parse(text)
    assert cmd.option("--config-name") == "ppo_megatron_trainer" and cmd.option("--config-path") == "config"
    assert cmd.overrides == ("trainer.experiment_name=a b", "data.tokenizer=$literal",
                             'trainer.logger=["console"]', "+trainer.extra=7")
    assert cmd.line == 3


def test_unquoted_expansion_splits_into_words():
    [cmd] = parse('ARGS="a=1 b=2"\npython3 -m verl.trainer.main_ppo $ARGS c=3\n')
    assert cmd.overrides == ("a=1", "b=2", "c=3")
    [cmd] = parse('ARGS="a=1 b=2"\npython3 -m verl.trainer.main_ppo "$ARGS"\n')
    assert cmd.overrides == ("a=1 b=2",)


def test_ray_job_submit_and_non_verl_commands():
    text = ("python3 convert.py a b\nray job submit --address=http://h:8265 -- python3 -m "
            "verl.trainer.main_ppo trainer.nnodes=2\npython3 -m other.module x=1\n")
    [cmd] = parse(text)
    assert cmd.launcher[:3] == ("ray", "job", "submit") and cmd.overrides == ("trainer.nnodes=2",)
    assert cmd.line == 2


def test_commented_command_is_not_read():
    assert parse("# python3 -m verl.trainer.main_ppo x=1\necho hi\n") == []
    assert mentions_verl("torchrun --standalone -m verl.trainer.sft_trainer a=1")
    assert not mentions_verl("python3 train.py --verl")
