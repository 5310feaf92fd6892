"""What every spec model is made of: `_Spec` (frozen, extra keys refused, strict types, every raw
value checked; one SpecError for a bad field) and `src`, a field's one description plus the
source of its default. The method specs (whileai.spec.methods), the endpoint
(whileai.spec.endpoint) and the run spec's tables stand on it."""


import contextvars
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from whileai.spec import values
from whileai.spec.validation import from_validation


def src(text: str, source: str, **kw: Any) -> Any:
    """A field description plus the source of its default (shown by `whileai methods`)."""
    extra: dict[str, Any] = {"source": source} if source else {}
    if "default_factory" in kw:  # pydantic reads each factory's signature when it builds the
        make = kw["default_factory"]  # model: a Python function's is at hand, a builtin's (dict,
        kw["default_factory"] = lambda: make()  # list) is parsed from text with tokenize
    return Field(description=text, json_schema_extra=extra, **kw)


class _Spec(BaseModel):
    # strict: "100" is not an int here, as the JSON Schema says; a spec file is typed TOML
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _values(cls, data: Any) -> Any:
        """Secrets, control characters, 64-bit integers, finite floats: every value, raw."""
        values.check_tree(data)
        return data

    def __init__(self, /, **data: Any) -> None:
        # Called by users and, for nested models, by pydantic itself: convert only at the top.
        if _NESTED.get():
            super().__init__(**data)
            return
        token = _NESTED.set(True)
        try:
            super().__init__(**data)
        except ValidationError as e:
            raise from_validation(e, type(self)) from None
        finally:
            _NESTED.reset(token)


_NESTED: contextvars.ContextVar[bool] = contextvars.ContextVar("whileai_nested", default=False)


def validate_raw(model: type[BaseModel], data: Any) -> Any:
    """model_validate with pydantic's own errors (the caller turns them into one SpecError)."""
    token = _NESTED.set(True)
    try:
        return model.model_validate(data)
    finally:
        _NESTED.reset(token)
