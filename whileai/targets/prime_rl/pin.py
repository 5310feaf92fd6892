"""The prime-rl commit every prime-rl file whileai writes is for (the catalogues, the loader mirror,
the Modal image and the report all name this one)."""

COMMIT = "559b44772e471d1538537b8805cc77f3824a5e64"
VERSION = "0.8.0"  # packages/prime-rl-configs' project version at COMMIT is 0.4.0; prime-rl's is 0.8.0
TARGET = f"prime-rl {COMMIT[:7]} ({VERSION})"
