"""The template sandbox: jinja2's immutable sandbox, plus bounds on what a template can build.

jinja2's sandbox stops a template from reaching Python internals, but not from asking for
``'x' * 10**9``, ``10**(10**10)`` (jinja2 reads ``10**10**10`` as ``(10**10)**10``, which is
harmless), ``'%999999999d' % 1``, ``'{:999999999}'.format(1)`` or two nested
``range(100000)`` loops: each hangs the render or exhausts memory. With ``--templates`` a
repository's template folder runs in CI, so this environment bounds, per value and per render
(one Template.render: the template, what it includes and the macros it calls):

- a string at ``MAX_STRING`` characters, a list/tuple/dict/set at ``MAX_ITEMS`` items, an
  integer at ``MAX_INT_BITS`` bits. Every operator (``+ - * / // % **`` and ``~``), method
  call, filter, global and ``{{ }}`` output is checked, before it computes whenever its
  result could be much larger than its operands (``*``, ``**``, ``%`` and ``format``
  widths, ``center``, ``replace``, ``join``, ``indent``, ``batch``, ``lipsum``...), and
  converting a value to text (``{{ }}``, ``~``, ``string``, ``tojson``...) is refused when
  the text would be too long (a list of a million references to one long string, say);
- the steps of a render at ``MAX_STEPS``: loop iterations, calls (macros recurse) and
  includes, so nested loops and exponential recursion fail within a second;
- the text a render produces at ``MAX_OUTPUT`` characters, counting ``{{ }}`` outputs and the
  template text of loop bodies once per iteration, plus the whole output of the template;
- the values a render computes at ``MAX_BUILT`` characters or items in all, so that values
  kept in a namespace or a list cannot add up to gigabytes one bounded step at a time.

A refused step raises jinja2's SecurityError inside the template code, so it surfaces like any
template error, as ``template:line: template error: ...`` (render/engine.py).

Not bounded, by decision: work that touches no hook, chiefly comparisons and ``in`` tests.
Each is linear in values of at most MAX_STRING, so a loop doing one per iteration does at
most MAX_STEPS x MAX_STRING character operations: seconds to minutes, not for ever. Where
untrusted template folders are rendered, run paddlegen under a timeout as well.

Only jinja2's public API is used, so that any jinja2 3.x keeps the bounds: the sandbox's hooks
(``call_binop``, ``call``, ``getattr``/``getitem``, ``is_safe_attribute``), ``finalize``, the
filters and globals, ``Template.render``, and the parsed template (``jinja2.nodes``, which
jinja2 keeps backwards compatible), where loops and ``~`` are routed through the environment
before jinja2 compiles it.
"""

from __future__ import annotations

import contextvars
import importlib
import re
import string
import types
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from functools import update_wrapper
from typing import Any, cast

from jinja2 import (
    Template,
    nodes,
    pass_context,
    pass_environment,
    pass_eval_context,
)
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment
from markupsafe import Markup, soft_str

# A spec is at most 1 MiB (loader.MAX_BYTES) and a template may repeat a value once per role:
MAX_STRING = 4 << 20  # characters of one string
MAX_ITEMS = 1 << 20  # items of one list, tuple, dict or set
MAX_INT_BITS = 4096  # Kubernetes integers have 64 bits; 4096 leaves room for arithmetic
MAX_STEPS = 200_000  # loop iterations + calls + includes, per render: under a second
MAX_OUTPUT = 16 << 20  # characters a render produces (a Kubernetes object is at most ~1.5 MiB)
MAX_BUILT = 256 << 20  # characters (or items) of all the values a render computes


class _Budget:
    """What one render has used so far."""

    __slots__ = ("built", "output", "steps")

    def __init__(self) -> None:
        self.steps = 0
        self.output = 0
        self.built = 0

    def step(self, count: int = 1) -> None:
        self.steps += count
        if self.steps > MAX_STEPS:
            raise SecurityError(
                f"the template takes more than {MAX_STEPS} steps (loop "
                "iterations, calls, includes); the sandbox stops it there"
            )

    def build(self, size: int) -> None:
        self.built += size
        if self.built > MAX_BUILT:
            raise SecurityError(
                f"the template computes values of more than {MAX_BUILT} "
                "characters or items in all; the sandbox stops it there"
            )

    def produce(self, chars: int) -> None:
        self.output += chars
        if self.output > MAX_OUTPUT:
            raise SecurityError(
                f"the template produces more than {MAX_OUTPUT} characters; "
                "the sandbox stops it there"
            )


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar(
    "paddlegen_budget", default=None
)


def _budget() -> _Budget:
    """The budget of the render in progress (outside Template.render: a fresh one)."""
    return _BUDGET.get() or _Budget()


# ---- sizes ---------------------------------------------------------------------------------


def _text_size(value: Any, limit: int) -> int:
    """About how many characters ``str(value)`` has; stops counting once past ``limit``.

    A lower bound (a repr may add quotes and escapes), exact for strings, costing at most
    ``limit`` steps: enough to refuse a conversion before it allocates.
    """
    if isinstance(value, str):
        return len(value)
    if value is None or isinstance(value, bool):
        return 5
    if isinstance(value, int):
        return value.bit_length() * 3 // 10 + 1
    if isinstance(value, float):
        return 24
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        items: Iterable[Any] = (
            (x for kv in value.items() for x in kv) if isinstance(value, dict) else value
        )
        total = 2
        for item in items:
            total += _text_size(item, limit - total) + 2
            if total > limit:
                break
        return total
    return 16  # other objects: the model's (bounded by the spec), jinja2's helpers


def _check_text(value: Any, what: str, limit: int = MAX_STRING) -> None:
    size = _text_size(value, limit)
    if size > limit:
        raise SecurityError(
            f"{what} would be more than {limit} characters long; the sandbox refuses it"
        )


def _check_size(value: Any, what: str) -> Any:
    """``value`` if it is within the bounds (and counted as built), else SecurityError."""
    if value is None or type(value) is bool:
        return value
    if isinstance(value, str):
        if len(value) > MAX_STRING:
            raise SecurityError(
                f"{what} has {len(value)} characters; the sandbox allows {MAX_STRING}"
            )
    elif isinstance(value, int):
        if value.bit_length() > MAX_INT_BITS:
            raise SecurityError(
                f"{what} has {value.bit_length()} bits; the sandbox allows {MAX_INT_BITS}"
            )
    elif isinstance(value, (list, tuple, dict, set, frozenset)) and len(value) > MAX_ITEMS:
        raise SecurityError(f"{what} has {len(value)} items; the sandbox allows {MAX_ITEMS}")
    budget = _BUDGET.get()
    if budget is not None and isinstance(value, (str, list, tuple, dict, set, frozenset)):
        budget.build(len(value))
    return value


def _length(value: Any) -> int:
    try:
        return len(value)
    except TypeError:
        return 0


def _int_arg(value: Any, what: str, limit: int = MAX_STRING) -> None:
    if isinstance(value, int) and value > limit:
        raise SecurityError(f"{what} {value} is more than the sandbox allows ({limit})")


# ---- operators -----------------------------------------------------------------------------


def _check_binop(op: str, left: Any, right: Any) -> None:
    """Refuse, before computing it, an operation whose result would be over the bounds."""
    if op == "*":
        for seq, count in ((left, right), (right, left)):
            limit = MAX_STRING if isinstance(seq, str) else MAX_ITEMS
            if (
                isinstance(count, int)
                and not isinstance(seq, int)
                and count > 0
                and _length(seq) * count > limit
            ):
                raise SecurityError(
                    f"'*' would repeat {_length(seq)} items {count} times; "
                    f"the sandbox allows {limit} in all"
                )
        if (
            isinstance(left, int)
            and isinstance(right, int)
            and left.bit_length() + right.bit_length() > MAX_INT_BITS + 1
        ):
            raise SecurityError(f"'*' would make an integer of more than {MAX_INT_BITS} bits")
    elif op == "**":
        if (
            isinstance(left, int)
            and isinstance(right, int)
            and right > 0
            and abs(left) > 1
            and (abs(left).bit_length() - 1) * right > MAX_INT_BITS
        ):
            raise SecurityError(f"'**' would make an integer of more than {MAX_INT_BITS} bits")
    elif op == "+":
        if (
            isinstance(left, (str, list, tuple))
            and isinstance(right, type(left))
            and len(left) + len(right) > (MAX_STRING if isinstance(left, str) else MAX_ITEMS)
        ):
            raise SecurityError("'+' would make a value larger than the sandbox allows")
    elif op == "%" and isinstance(left, str):
        _check_percent(left, right)


# printf-style conversion specifiers: %[(key)][flags][width][.precision][length]type
_PERCENT = re.compile(r"%(?:\(([^)]*)\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d*))?[hlL]?(.)", re.S)


def _check_percent(fmt: str, args: Any) -> None:
    """``fmt % args`` stays within MAX_STRING: widths, precisions and the values it prints."""
    if isinstance(args, tuple):
        values = list(args)
    elif isinstance(args, Mapping):
        values = list(args.values())
    else:
        values = [args]
    largest = max((_text_size(v, MAX_STRING) for v in values), default=0)
    total = len(fmt)
    for match in _PERCENT.finditer(fmt):
        width, precision, kind = match.group(2), match.group(3), match.group(4)
        if width == "*" or precision == "*":
            raise SecurityError("'*' widths and precisions are not allowed in templates")
        total += int(width or 0) + int(precision or 0)
        if kind != "%":
            total += largest
        if total > MAX_STRING:
            raise SecurityError(
                f"'%' formatting would make more than {MAX_STRING} characters;"
                " the sandbox refuses it"
            )


# "0.attr[key]" -> (0, [(True, "attr"), (False, "key")]): the stdlib's own splitter, which
# string.Formatter.get_field and jinja2's sandboxed formatter use (_string has no type stubs).
_split_field_name: Callable[[str], tuple[Any, Iterable[tuple[bool, Any]]]] = (
    importlib.import_module("_string").formatter_field_name_split
)


class _BoundedFormatter(string.Formatter):
    """Measures what str.format and format_map would make, before jinja2's sandboxed formatter
    makes it: each field's width and text, and the total. Fields are looked up as jinja2 looks
    them up, through the environment's getattr and getitem (an unsafe one fails here first)."""

    def __init__(self, env: Any) -> None:
        super().__init__()
        self._env = env
        self._total = 0

    def vformat(self, format_string: str, args: Any, kwargs: Any) -> str:
        self._total = len(format_string)
        return super().vformat(format_string, args, kwargs)

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> tuple[Any, Any]:
        first, rest = _split_field_name(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attr, key in rest:
            obj = self._env.getattr(obj, key) if is_attr else self._env.getitem(obj, key)
        return obj, first

    def format_field(self, value: Any, format_spec: str) -> Any:
        for number in re.findall(r"\d+", format_spec):
            _int_arg(int(number), "the format width or precision")
        self._total += _text_size(value, MAX_STRING) + sum(
            int(n) for n in re.findall(r"\d+", format_spec)
        )
        if self._total > MAX_STRING:
            raise SecurityError(
                f"str.format would make more than {MAX_STRING} characters; the sandbox refuses it"
            )
        return super().format_field(value, format_spec)


_FORMAT_METHODS = frozenset({"format", "format_map"})


def _bounded_format(env: Any, text: str, method: str, format_: Any) -> Any:
    """jinja2's sandboxed ``text.format`` (or ``format_map``), measured before it runs.

    jinja2 (from 3.1.5) hands these out sandboxed when they are read, so that a call made
    without ``call`` is sandboxed too: they are measured at the same place. A bare method is
    left as it is, for jinja2 to sandbox where it does: wrapped, jinja2 could not tell it.
    """
    if isinstance(format_, types.BuiltinMethodType):
        return format_

    def measured(*args: Any, **kwargs: Any) -> Any:
        if method == "format":
            _BoundedFormatter(env).vformat(text, args, kwargs)
        elif len(args) == 1 and not kwargs:  # else jinja2's raises the TypeError
            _BoundedFormatter(env).vformat(text, (), args[0])
        return format_(*args, **kwargs)

    return update_wrapper(measured, format_)


# ---- methods of str called from a template -------------------------------------------------


def _check_str_method(name: str, text: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    arg = args[0] if args else None
    if name in ("center", "ljust", "rjust", "zfill"):
        _int_arg(arg if arg is not None else kwargs.get("width"), f"str.{name} width")
    elif name == "expandtabs":
        size = arg if arg is not None else kwargs.get("tabsize", 8)
        if isinstance(size, int) and len(text) + text.count("\t") * size > MAX_STRING:
            raise SecurityError("str.expandtabs would make a string larger than the sandbox allows")
    elif name == "replace":
        _check_replace(text, *args, **kwargs)
    elif name == "join":
        items = arg if isinstance(arg, list) else []  # call() made it a list
        if (
            len(text) * max(len(items) - 1, 0)
            + sum(_text_size(i, MAX_STRING) for i in items[:MAX_ITEMS])
            > MAX_STRING
        ):
            raise SecurityError("str.join would make a string larger than the sandbox allows")
    elif name == "translate" and isinstance(arg, Mapping):
        longest = max((len(v) for v in arg.values() if isinstance(v, str)), default=1)
        if len(text) * longest > MAX_STRING:
            raise SecurityError("str.translate could make a string larger than the sandbox allows")


def _check_replace(
    text: Any, old: Any = None, new: Any = None, count: Any = -1, *_: Any, **__: Any
) -> None:
    if not (isinstance(text, str) and isinstance(old, str) and isinstance(new, str)):
        return
    times = text.count(old) if old else len(text) + 1
    if isinstance(count, int) and count >= 0:
        times = min(times, count)
    if len(text) + times * (len(new) - len(old)) > MAX_STRING:
        raise SecurityError("replace would make a string larger than the sandbox allows")


# ---- filters and globals -------------------------------------------------------------------

# Filters that turn their whole input into text: the text is bounded before they run.
_TEXT_FILTERS = {
    "string",
    "tojson",
    "pprint",
    "e",
    "escape",
    "forceescape",
    "safe",
    "urlize",
    "xmlattr",
    "urlencode",
    "title",
    "capitalize",
    "upper",
    "lower",
    "trim",
    "striptags",
    "wordcount",
    "truncate",
}


def _check_filter(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    value = args[0] if args else None
    rest = args[1:]

    def option(position: int, key: str, default: Any = None) -> Any:
        return rest[position] if len(rest) > position else kwargs.get(key, default)

    if name in _TEXT_FILTERS:
        _check_text(value, f"the input of filter '{name}'")
    elif name == "center":
        _int_arg(option(0, "width", 80), "center width")
    elif name == "indent":
        width = option(0, "width", 4)
        pad = len(width) if isinstance(width, str) else width if isinstance(width, int) else 0
        text = str(value) if isinstance(value, str) else ""
        if len(text) + (text.count("\n") + 1) * max(pad, 0) > MAX_STRING:
            raise SecurityError("indent would make a string larger than the sandbox allows")
    elif name == "format" and isinstance(value, str):
        _check_percent(value, kwargs or tuple(rest))
    elif name == "replace":
        _check_replace(value, *rest[:3], **{k: v for k, v in kwargs.items() if k == "count"})
    elif name == "join":
        separator = option(0, "d", "")
        items = value if isinstance(value, (list, tuple, set, frozenset, dict)) else None
        if (
            items is not None
            and len(str(separator)) * max(len(items) - 1, 0) + _text_size(list(items), MAX_STRING)
            > MAX_STRING
        ):
            raise SecurityError("join would make a string larger than the sandbox allows")
    elif name == "wordwrap":
        wrap = option(2, "wrapstring", "\n")
        text = value if isinstance(value, str) else ""
        if isinstance(wrap, str) and len(text) * (1 + len(wrap)) > MAX_STRING:
            raise SecurityError("wordwrap could make a string larger than the sandbox allows")
    elif name in ("batch", "slice"):
        _int_arg(
            option(0, "linecount" if name == "batch" else "slices"), f"{name} count", MAX_ITEMS
        )
    elif (
        name == "sum"
        and isinstance(value, (list, tuple))
        and value
        and isinstance(value[0], (list, tuple))
        and (len(value) > 10_000 or sum(_length(v) for v in value) > MAX_ITEMS)
    ):
        # sum() of lists copies the sum so far at every step: quadratic; bound its length.
        raise SecurityError("sum of lists would be larger than the sandbox allows")


# What jinja2's pass_context, pass_eval_context and pass_environment leave on a function, which
# tells jinja2 to pass it that object before the value.
_PASS_MARKS = tuple(
    vars(decorator(lambda: None))
    for decorator in (pass_context, pass_eval_context, pass_environment)
)


def _passes_first(func: Callable[..., Any]) -> bool:
    """Whether jinja2 calls ``func`` with a context, eval context or environment first."""
    marks = getattr(func, "__dict__", {})
    return any(mark and mark.items() <= marks.items() for mark in _PASS_MARKS)


def _wrap_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` with its arguments checked before and its result after it runs; jinja2 passes
    it what it passes ``func`` (update_wrapper copies the pass_* mark)."""
    skip = 1 if _passes_first(func) else 0

    def checked(*args: Any, **kwargs: Any) -> Any:
        if (
            name in ("sum", "join")
            and len(args) > skip
            and not isinstance(args[skip], (str, list, tuple, dict, set, frozenset))
        ):
            args = (*args[:skip], list(args[skip]), *args[skip + 1 :])  # measured, then used
        _check_filter(name, args[skip:], kwargs)
        return _check_size(func(*args, **kwargs), f"the result of filter '{name}'")

    wrapped = update_wrapper(checked, func)
    wrapped.__wrapped_filter__ = func  # type: ignore[attr-defined]
    return wrapped


class _CheckedFilters(dict):  # type: ignore[type-arg]
    """The filters mapping: a filter added after the environment exists is checked too."""

    def __setitem__(self, name: str, func: Callable[..., Any]) -> None:
        if not hasattr(func, "__wrapped_filter__"):
            func = _wrap_filter(name, func)
        super().__setitem__(name, func)


def _lipsum(func: Any) -> Callable[..., Any]:
    def lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> Any:  # noqa: A002
        if isinstance(n, int) and isinstance(max, int) and n * max * 12 > MAX_STRING:
            raise SecurityError("lipsum would make more text than the sandbox allows")
        return func(n, html, min, max)

    return update_wrapper(lipsum, func)


# ---- the parsed template: `~` and for loops --------------------------------------------------


def _static_text(body: list[nodes.Node]) -> int:
    """Characters of template text in a loop's body (written once per iteration)."""
    return sum(len(data.data) for data in nodes.Template(body).find_all(nodes.TemplateData))


def _route_through_environment(tree: nodes.Template) -> None:
    """Every for loop's items through ``sandbox_loop`` and every ``~`` through the ``~`` filter.

    Neither touches a hook of jinja2's sandbox: a loop calls no function and ``~`` is no
    intercepted operator, so the tree jinja2 parsed is rewritten before it is compiled.
    """
    # Children before their parents, so that a `~` inside a `~`'s operand is rewritten too.
    for node in reversed([tree, *tree.find_all(nodes.Node)]):
        for field, value in node.iter_fields():
            if isinstance(value, nodes.Concat):
                setattr(node, field, _checked_concat(value))
            elif isinstance(value, list):
                value[:] = [_checked_concat(v) if isinstance(v, nodes.Concat) else v for v in value]
        if isinstance(node, nodes.For):
            node.iter = nodes.Call(
                nodes.EnvironmentAttribute("sandbox_loop"),
                [node.iter, nodes.Const(_static_text(node.body))],
                [],
                None,
                None,
                lineno=node.iter.lineno,
            )


def _checked_concat(concat: nodes.Concat) -> nodes.Filter:
    operands = nodes.Tuple(concat.nodes, "load", lineno=concat.lineno)
    return nodes.Filter(operands, "~", [], [], None, None, lineno=concat.lineno)


@pass_eval_context
def _concat(eval_ctx: Any, values: tuple[Any, ...]) -> str:
    """``a ~ b ~ ...``: the operands joined as jinja2 joins them (escaping them when one is
    Markup and autoescape is on), once their text together is known to be within MAX_STRING."""
    total = 0
    for value in values:
        total += _text_size(value, MAX_STRING - total)
        if total > MAX_STRING:
            raise SecurityError(
                f"'~' would make a string of more than {MAX_STRING} "
                "characters; the sandbox refuses it"
            )
    budget = _BUDGET.get()
    if budget is not None:
        budget.build(total)
    if eval_ctx.autoescape:
        texts = [soft_str(value) for value in values]
        if any(hasattr(text, "__html__") for text in texts):
            return Markup("").join(texts)
        return "".join(texts)
    return "".join([str(value) for value in values])


# ---- the environment -----------------------------------------------------------------------


class _BoundedTemplate(Template):
    """A template whose render has a budget of its own and an output bounded at MAX_OUTPUT."""

    def render(self, *args: Any, **kwargs: Any) -> str:
        token = _BUDGET.set(_Budget())
        try:
            chunks = cast("Generator[str, None, None]", self.generate(*args, **kwargs))
            out: list[str] = []
            size = 0
            for chunk in chunks:
                size += len(chunk)
                if size > MAX_OUTPUT:
                    error = SecurityError(
                        f"the template produces more than {MAX_OUTPUT} "
                        "characters; the sandbox stops it there"
                    )
                    # Raised at the template line that yielded the chunk (generate re-raises
                    # what its template raises); raised here should a generator swallow it.
                    chunks.throw(error)
                    raise error
                out.append(chunk)
            return "".join(out)
        finally:
            _BUDGET.reset(token)


class BoundedSandboxedEnvironment(ImmutableSandboxedEnvironment):
    """ImmutableSandboxedEnvironment that also bounds sizes and steps (see the module doc)."""

    intercepted_binops = frozenset(["+", "-", "*", "/", "//", "%", "**"])
    template_class = _BoundedTemplate

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._safe_attributes: dict[tuple[type, str], bool] = {}
        filters = _CheckedFilters()
        for name, func in self.filters.items():
            filters[name] = func
        dict.__setitem__(filters, "~", _concat)  # checks itself; no template can name it
        self.filters = filters
        self.globals["lipsum"] = _lipsum(self.globals["lipsum"])
        user_finalize = self.finalize

        def finalize(value: Any) -> Any:
            # Every {{ }} output: bounded as text, and counted against the render's output.
            size = len(value) if type(value) is str else _text_size(value, MAX_STRING)
            if size > MAX_STRING:
                _check_text(value, "an output")  # raises, with the message
            budget = _BUDGET.get()  # None when jinja2 folds a constant while compiling
            if budget is not None:
                budget.produce(size)
            return user_finalize(value) if user_finalize else value

        self.finalize = finalize

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        # jinja2's verdict depends only on the object's type and the name (isinstance tests
        # and name sets), so it is worked out once per pair: templates read many attributes.
        key = (type(obj), attr)
        verdict = self._safe_attributes.get(key)
        if verdict is None:
            verdict = self._safe_attributes[key] = super().is_safe_attribute(obj, attr, value)
        return verdict

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _check_binop(operator, left, right)
        return _check_size(self.binop_table[operator](left, right), f"the result of '{operator}'")

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        _budget().step()
        owner = getattr(__obj, "__self__", None)
        if isinstance(__obj, (types.BuiltinMethodType, types.MethodType)) and isinstance(
            owner, str
        ):
            name = __obj.__name__
            if name == "join" and args:
                args = (list(args[0]), *args[1:])  # to measure it (a generator is used up)
            _check_str_method(name, owner, args, kwargs)
        result = super().call(__context, __obj, *args, **kwargs)
        return _check_size(result, f"the result of {getattr(__obj, '__name__', 'a call')}()")

    def getattr(self, obj: Any, attribute: str) -> Any:
        value = super().getattr(obj, attribute)
        if attribute in _FORMAT_METHODS and isinstance(obj, str):
            return _bounded_format(self, obj, attribute, value)
        return value

    def getitem(self, obj: Any, argument: Any) -> Any:
        value = super().getitem(obj, argument)
        if isinstance(obj, str) and isinstance(argument, str) and argument in _FORMAT_METHODS:
            return _bounded_format(self, obj, argument, value)
        return value

    def compile(
        self,
        source: str | nodes.Template,
        name: str | None = None,
        filename: str | None = None,
        raw: bool = False,
        defer_init: bool = False,
    ) -> Any:
        tree = self.parse(source, name, filename) if isinstance(source, str) else source
        _route_through_environment(tree)
        tree.set_environment(self)  # the new nodes' too
        compile_: Any = super().compile  # one call for both of its typed overloads
        return compile_(tree, name, filename, raw, defer_init)

    def get_template(self, *args: Any, **kwargs: Any) -> Any:
        if _BUDGET.get() is not None:  # an include or import while rendering
            _budget().step()
        return super().get_template(*args, **kwargs)

    def select_template(self, *args: Any, **kwargs: Any) -> Any:
        if _BUDGET.get() is not None:
            _budget().step()
        return super().select_template(*args, **kwargs)

    @staticmethod
    def sandbox_loop(iterable: Any, body_chars: int) -> Iterator[Any]:
        """The items of a for loop, each counted as a step and as its body's template text."""
        budget = _budget()
        for item in iterable:
            budget.step()
            budget.produce(body_chars)
            yield item
