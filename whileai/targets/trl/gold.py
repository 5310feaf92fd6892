"""OPD across tokenizers with TRL's experimental GOLDTrainer (ULD loss). Written by whileai.

Run from this directory:  python train.py --config config.yaml
(several GPUs: accelerate launch --num_processes N train.py --config config.yaml)
The config is parsed by TRL's own parser with GOLDConfig; unknown keys are an error. The
teacher is loaded in-process with its own tokenizer (teacher_tokenizer_name_or_path).
"""

import os
import sys
from pathlib import Path

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def main(argv=None):
    from datasets import load_dataset
    from trl import ModelConfig, ScriptArguments, TrlParser, get_peft_config
    from trl.experimental.gold import GOLDConfig, GOLDTrainer

    argv = list(sys.argv[1:] if argv is None else argv)
    if "--config" not in argv:
        argv = ["--config", str(Path(__file__).with_name("config.yaml")), *argv]
    parser = TrlParser((ScriptArguments, GOLDConfig, ModelConfig))
    script_args, training_args, model_args = parser.parse_args_and_config(argv)
    init = {"revision": model_args.model_revision, "attn_implementation": model_args.attn_implementation,
            "dtype": model_args.dtype, "trust_remote_code": training_args.trust_remote_code}
    training_args.model_init_kwargs = init | (training_args.model_init_kwargs or {})
    dataset = load_dataset(script_args.dataset_name, name=script_args.dataset_config)
    trainer = GOLDTrainer(
        model=model_args.model_name_or_path,
        teacher_model=training_args.teacher_model_name_or_path,
        args=training_args,
        train_dataset=dataset[script_args.dataset_train_split],
        eval_dataset=dataset[script_args.dataset_test_split] if training_args.eval_strategy != "no" else None,
        peft_config=get_peft_config(model_args),
    )
    trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    trainer.save_model(training_args.output_dir)


if __name__ == "__main__":
    main()
