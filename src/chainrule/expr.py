"""A small, safe expression language for `chainrule graph` and the playground.

Grammar (usual precedence: ``**`` binds tightest and to the right, then unary minus, then ``* /``,
then ``+ -``; ``-x**2`` is ``-(x**2)`` as in Python)::

    expression := term (("+" | "-") term)*
    term       := unary (("*" | "/") unary)*
    unary      := ("-" | "+") unary | power
    power      := atom ("**" unary)?
    atom       := number | name | function "(" expression ")" | "(" expression ")"
    function   := the name of any one-input op of the table in ops.py (tanh, exp, log, relu, sigmoid,
                  abs, sin, cos, ...: `ops.functions(1)`)

The parser is an operator-precedence parser with explicit stacks, not recursion, and evaluation walks
the tree with a stack too, so no input can cause a RecursionError. Text is never evaluated as Python:
there is no eval, exec or compile. Limits: 10,000 characters and 200 levels of nested parentheses.
Every error in the text names its column (and `length`, how many characters it covers) and shows the
text with a caret under it.
"""

from __future__ import annotations

import keyword
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

from chainrule import ops
from chainrule.engine import Value
from chainrule.number_text import count_text

__all__ = ["parse", "Expression", "ExpressionError", "Node", "FUNCTIONS", "MAX_LENGTH", "MAX_DEPTH",
           "allowed"]

MAX_LENGTH = 10_000
MAX_DEPTH = 200

class _Functions(Mapping[str, Callable[[Value], Value]]):
    """The functions an expression may call, read from the op table each time (an op registered at run
    time is callable at once): name -> how it acts on a chainrule Value."""

    def __getitem__(self, name: str) -> Callable[[Value], Value]:
        op = ops.functions(1)[name]
        return lambda v: Value.apply(op, v)

    def __iter__(self) -> Iterator[str]:
        return iter(ops.functions(1))

    def __len__(self) -> int:
        return len(ops.functions(1))


FUNCTIONS: Mapping[str, Callable[[Value], Value]] = _Functions()


def allowed() -> str:
    """What an expression may hold, for error messages."""
    return ("allowed: numbers (2, 0.5, 1e-3), names (x, w1), + - * / **, unary minus, parentheses, "
            "and the functions " + ", ".join(FUNCTIONS) + " with one argument each")


class ExpressionError(ValueError):
    """A problem with an expression: the message, the column (1-based) and the text with a caret.

    `length` is how many characters from `column` the problem covers (a whole unknown name, say), so
    that a page can mark them in the text; None when there is no column.
    """

    def __init__(self, message: str, text: str = "", column: int | None = None, length: int = 1) -> None:
        self.message = message
        self.text = text
        self.column = column
        self.length = None if column is None else max(1, length)
        super().__init__(self._render())

    def _render(self) -> str:
        if self.column is None:
            return self.message
        where = f"{self.message} (column {self.column})"
        # Show a window of the text around the column so that a long input still reads on one line.
        start = max(0, self.column - 1 - 40)
        end = min(len(self.text), self.column - 1 + 40)
        snippet = self.text[start:end].replace("\n", " ").replace("\t", " ")
        prefix = "..." if start > 0 else ""
        suffix = "..." if end < len(self.text) else ""
        caret = " " * (len(prefix) + self.column - 1 - start) + "^"
        return f"{where}\n  {prefix}{snippet}{suffix}\n  {caret}"


@dataclass(frozen=True, slots=True, eq=False, repr=False)  # the generated ones recurse: trees can be deep
class Node:
    """One node of the parsed tree.

    kind is "number" (value), "name" (name), "neg" (args[0]), "call" (name, args[0]) or a binary
    operator "+", "-", "*", "/", "**" (args[0], args[1]). column is 1-based.
    """

    kind: str
    column: int
    value: float = 0.0
    name: str = ""
    args: tuple["Node", ...] = field(default=())


# --- tokens ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # "number", "name", "op", "(", ")", "end", or "error" (raised when the parser gets there)
    text: str
    column: int
    value: float = 0.0
    error: "ExpressionError | None" = None


_OPERATOR_CHARS = "+-*/"
_HINTS = {
    "^": "use ** for powers",
    ".": "attribute access is not allowed",
    "[": "subscripts are not allowed",
    "]": "subscripts are not allowed",
    ",": "functions take exactly one argument",
    "=": "assignments and comparisons are not allowed",
    "'": "strings are not allowed",
    '"': "strings are not allowed",
    ":": "lambdas, slices and annotations are not allowed",
    "%": "only + - * / ** are allowed",
    "@": "only + - * / ** are allowed",
}


def _tokenize(text: str) -> list[_Token]:
    """The tokens of `text`. A lexical error becomes a final "error" token, so that the parser reports
    problems in the order of the text (in `__import__('os')` the unknown function comes first)."""
    tokens: list[_Token] = []
    try:
        _scan(text, tokens)
    except ExpressionError as error:
        tokens.append(_Token("error", "", error.column or 1, error=error))
        return tokens
    tokens.append(_Token("end", "", len(text) + 1))
    return tokens


def _scan(text: str, tokens: list[_Token]) -> None:
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        column = i + 1
        if ch in " \t\r\n":
            i += 1
        elif ch.isascii() and (ch.isdigit() or (ch == "." and i + 1 < n and text[i + 1].isdigit())):
            token, i = _number_token(text, i)
            tokens.append(token)
        elif ch.isascii() and (ch.isalpha() or ch == "_"):
            token, i = _name_token(text, i)
            tokens.append(token)
        elif ch == "*" and text.startswith("**", i):
            tokens.append(_Token("op", "**", column))
            i += 2
        elif ch in _OPERATOR_CHARS:
            tokens.append(_Token("op", ch, column))
            i += 1
        elif ch in "()":
            tokens.append(_Token(ch, ch, column))
            i += 1
        else:
            hint = _HINTS.get(ch, "this character is not part of the language")
            raise ExpressionError(f"unexpected {ch!r}: {hint}; {allowed()}", text, column)


def _digits_end(text: str, j: int) -> int:
    """Where the run of ASCII digits starting at j ends."""
    while j < len(text) and text[j].isascii() and text[j].isdigit():
        j += 1
    return j


def _number_token(text: str, i: int) -> tuple[_Token, int]:
    """The number starting at i (digits, a fraction, an exponent) and where it ends."""
    n, column = len(text), i + 1
    j = _digits_end(text, i)
    if j < n and text[j] == ".":
        j = _digits_end(text, j + 1)
    if j < n and text[j] in "eE":
        k = j + 1
        if k < n and text[k] in "+-":
            k += 1
        if k < n and text[k].isascii() and text[k].isdigit():
            j = _digits_end(text, k)
    literal = text[i:j]
    if j < n and (text[j].isalpha() or text[j] == "_"):
        k = j
        while k < n and text[k].isascii() and (text[k].isalnum() or text[k] == "_"):
            k += 1
        raise ExpressionError(
            f"malformed number {text[i:k]!r}: a product needs an explicit *, as in "
            f"{literal}*{text[j:k]}", text, j + 1, k - j)
    if j < n and text[j] == ".":
        raise ExpressionError(
            f"malformed number {text[i:j + 1]!r}; {allowed()}", text, j + 1)
    value = float(literal)
    if not math.isfinite(value):
        raise ExpressionError(f"the number {literal} is too large for a float", text, column, len(literal))
    return _Token("number", literal, column, value), j


def _name_token(text: str, i: int) -> tuple[_Token, int]:
    """The name starting at i (never a Python keyword) and where it ends."""
    j = i
    while j < len(text) and text[j].isascii() and (text[j].isalnum() or text[j] == "_"):
        j += 1
    word = text[i:j]
    if keyword.iskeyword(word) or keyword.issoftkeyword(word):
        raise ExpressionError(f"{word!r} is a Python keyword and is not allowed; {allowed()}",
                              text, i + 1, len(word))
    return _Token("name", word, i + 1), j


# --- the parser: operator precedence with explicit stacks -------------------------------------------

# Binary operators: precedence and whether they group to the right.
_BINARY = {"+": (1, False), "-": (1, False), "*": (2, False), "/": (2, False), "**": (4, True)}
_UNARY_PRECEDENCE = 3  # below **, above * and /


@dataclass(slots=True)
class _Pending:
    """An operator waiting on the stack: a binary or unary operator, or an open parenthesis
    (optionally the one of a function call)."""

    kind: str  # "binary", "unary", "paren"
    text: str
    column: int
    function: str = ""


def _precedence(entry: _Pending) -> int:
    if entry.kind == "binary":
        return _BINARY[entry.text][0]
    if entry.kind == "unary":
        return _UNARY_PRECEDENCE
    return -1  # parentheses stop every reduction


def _reduce(entry: _Pending, operands: list[Node]) -> None:
    if entry.kind == "unary":
        operand = operands.pop()
        if entry.text == "-":
            operands.append(Node("neg", entry.column, args=(operand,)))
        else:
            operands.append(operand)  # unary plus changes nothing
    else:
        right = operands.pop()
        left = operands.pop()
        operands.append(Node(entry.text, entry.column, args=(left, right)))


def parse(text: str) -> "Expression":
    """Parse `text` into an `Expression`, or raise `ExpressionError` naming the column."""
    if not isinstance(text, str):
        raise ExpressionError(f"an expression is text, not {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(
            f"the expression is {count_text(len(text), 'character')} long; the limit is {MAX_LENGTH:,}")
    if not text.strip():
        raise ExpressionError(f"the expression is empty; {allowed()}")
    return Expression(text, _Parser(text, _tokenize(text)).tree())


class _Parser:
    """Operator precedence with explicit stacks: operands, and the operators and parentheses pending."""

    def __init__(self, text: str, tokens: list[_Token]) -> None:
        self.text, self.tokens = text, tokens
        self.operands: list[Node] = []
        self.pending: list[_Pending] = []
        self.depth = 0
        self.position = 0

    def tree(self) -> Node:
        expect_operand = True
        while True:
            token = self.tokens[self.position]
            self.position += 1
            if token.error is not None:
                raise token.error
            if expect_operand:
                expect_operand = not self._operand(token)
            elif token.kind == "end":
                self._end()
                return self.operands[0]
            else:
                expect_operand = self._operator(token)

    def _operand(self, token: _Token) -> bool:
        """Read a token where an operand is expected; True when an operand is complete (an operator comes next)."""
        if token.kind == "number":
            self.operands.append(Node("number", token.column, value=token.value))
            return True
        if token.kind == "name":
            return self._name(token)
        if token.kind == "(":
            self._open(token.column, token.column)
            return False
        if token.kind == "op" and token.text in "+-":
            self.pending.append(_Pending("unary", token.text, token.column))
            return False
        if token.kind == "end":
            raise ExpressionError(
                "the expression ends where a number, a name or '(' was expected", self.text, token.column)
        raise ExpressionError(
            f"unexpected {token.text!r} where a number, a name, a function or '(' was expected",
            self.text, token.column, len(token.text))

    def _name(self, token: _Token) -> bool:
        """A name: a function's call opens a parenthesis; a function without one is refused."""
        following = self.tokens[self.position]
        if following.kind == "(":
            if token.text not in FUNCTIONS:
                raise ExpressionError(
                    f"unknown function {token.text!r}; {allowed()}", self.text, token.column, len(token.text))
            self._open(token.column, following.column, function=token.text)
            self.position += 1
            return False
        if token.text in FUNCTIONS:
            raise ExpressionError(
                f"{token.text} is a function: write {token.text}(...)", self.text, token.column,
                len(token.text))
        self.operands.append(Node("name", token.column, name=token.text))
        return True

    def _open(self, where: int, column: int, function: str = "") -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ExpressionError(f"the expression is nested deeper than {MAX_DEPTH} levels", self.text, where)
        self.pending.append(_Pending("paren", "(", column, function=function))

    def _operator(self, token: _Token) -> bool:
        """Read a token where an operator or a closing parenthesis is expected; True when an operand comes next."""
        if token.kind == "op":
            precedence, right_assoc = _BINARY[token.text]
            while self.pending and (
                _precedence(self.pending[-1]) > precedence
                or (_precedence(self.pending[-1]) == precedence and not right_assoc)
            ):
                _reduce(self.pending.pop(), self.operands)
            self.pending.append(_Pending("binary", token.text, token.column))
            return True
        if token.kind == ")":
            self._close(token)
            return False
        if token.kind == "(":
            raise ExpressionError(
                "unexpected '(': only the functions " + ", ".join(FUNCTIONS) + " can be called, "
                "and a product needs an explicit *", self.text, token.column)
        raise ExpressionError(
            f"unexpected {token.text!r}: an operator (+ - * / **), ')' or the end was expected; "
            "a product needs an explicit *", self.text, token.column, len(token.text))

    def _close(self, token: _Token) -> None:
        while self.pending and self.pending[-1].kind != "paren":
            _reduce(self.pending.pop(), self.operands)
        if not self.pending:
            raise ExpressionError("unmatched ')'", self.text, token.column)
        paren = self.pending.pop()
        self.depth -= 1
        if paren.function:
            self.operands.append(Node("call", paren.column - len(paren.function), name=paren.function,
                                      args=(self.operands.pop(),)))

    def _end(self) -> None:
        while self.pending:
            entry = self.pending.pop()
            if entry.kind == "paren":
                raise ExpressionError("this '(' is never closed", self.text, entry.column)
            _reduce(entry, self.operands)


# --- the parsed expression ----------------------------------------------------------------------


def _names_in_order(root: Node) -> list[str]:
    names: list[str] = []
    seen: set[str] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if node.kind == "name" and node.name not in seen:
            seen.add(node.name)
            names.append(node.name)
        stack.extend(reversed(node.args))  # left subtree first
    return names


class Expression:
    """A parsed expression: `text`, the tree `root`, its `names` in order of first appearance.

    `build(values)` makes a chainrule graph: each name becomes one leaf Value labelled with the name
    (a name used twice is one Value used twice), numbers become unlabelled constant leaves, and
    `x ** 2` with a literal exponent uses the engine's constant-power op.
    """

    def __init__(self, text: str, root: Node) -> None:
        self.text = text
        self.root = root
        self.names: list[str] = _names_in_order(root)

    def __repr__(self) -> str:
        shown = self.text if len(self.text) <= 60 else self.text[:57] + "..."
        return f"Expression({shown!r})"

    def check_values(self, values: Mapping[str, float]) -> dict[str, float]:
        """The values as floats, or an ExpressionError naming a missing or unused name."""
        missing = [name for name in self.names if name not in values]
        if missing:
            raise ExpressionError(
                f"no value for {', '.join(missing)}: give every name a value, e.g. "
                + " ".join(f"{name}=1.0" for name in missing))
        unused = [name for name in values if name not in self.names]
        if unused:
            raise ExpressionError(
                f"{', '.join(unused)} {'is' if len(unused) == 1 else 'are'} not in the expression; "
                f"its names are: {', '.join(self.names) or '(none)'}")
        result = {}
        for name in self.names:
            value = values[name]
            try:
                result[name] = float(value)
            except (TypeError, ValueError):
                raise ExpressionError(f"the value of {name} must be a number, not {value!r}") from None
        return result

    def evaluate(self, values: Mapping[str, float], lib: Mapping[str, Callable[..., Any]] | None = None
                 ) -> tuple[Any, dict[str, Any]]:
        """(result, {name: leaf}) from walking the tree with explicit stacks. `lib` maps "leaf",
        "number", "neg", "call:<f>", "+", "-", "*", "/", "**" and "**const" (a literal exponent) to
        callables; the default builds chainrule Values, and a torch version gives a torch graph."""
        lib = lib or _VALUE_LIB
        floats = self.check_values(values)
        leaves = {name: lib["leaf"](name, floats[name]) for name in self.names}
        results: list[Any] = []
        stack: list[tuple[Node, bool]] = [(self.root, False)]
        while stack:
            node, children_done = stack.pop()
            if node.kind == "number":
                results.append(lib["number"](node.value))
            elif node.kind == "name":
                results.append(leaves[node.name])
            elif not children_done:
                stack.append((node, True))
                exponent = node.args[1] if node.kind == "**" else None
                constant = _constant_exponent(exponent) if exponent is not None else None
                children = node.args[:1] if constant is not None else node.args
                for child in reversed(children):
                    stack.append((child, False))
            elif node.kind == "neg":
                results.append(lib["neg"](results.pop()))
            elif node.kind == "call":
                results.append(lib["call:" + node.name](results.pop()))
            elif node.kind == "**" and _constant_exponent(node.args[1]) is not None:
                results.append(lib["**const"](results.pop(), _constant_exponent(node.args[1])))
            else:
                right = results.pop()
                left = results.pop()
                results.append(lib[node.kind](left, right))
        return results[0], leaves

    def build(self, values: Mapping[str, float]) -> tuple[Value, dict[str, Value]]:
        """(output Value, {name: leaf Value}) for the given values of the names."""
        return self.evaluate(values)

    def build_on(self, leaves: Mapping[str, Value]) -> Value:
        """The output Value built on the given leaf Values (one per name), so that several expressions
        can share their inputs (one graph with several outputs)."""
        lib = _ValueLib(_VALUE_LIB, leaf=lambda name, value: leaves[name])
        built: Value = self.evaluate({name: leaves[name].data for name in self.names}, lib)[0]
        return built


def _constant_exponent(node: Node) -> float | None:
    """The exponent as a float when it is a literal number (or a negated one), else None."""
    sign = 1.0
    while node.kind == "neg":
        sign = -sign
        node = node.args[0]
    return sign * node.value if node.kind == "number" else None


class _ValueLib(dict[str, Callable[..., Any]]):
    """The default `lib` of `Expression.evaluate`: chainrule Values, "call:<f>" from the op table."""

    def __missing__(self, key: str) -> Callable[..., Any]:
        if key.startswith("call:"):
            return FUNCTIONS[key[5:]]
        raise KeyError(key)


_VALUE_LIB: dict[str, Callable[..., Any]] = _ValueLib({
    "leaf": lambda name, value: Value(value, label=name),
    "number": lambda value: Value(value),
    "neg": lambda a: -a,
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "**": lambda a, b: a ** b,
    "**const": lambda a, k: a ** k,
})
