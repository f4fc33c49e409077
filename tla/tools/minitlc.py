"""A small explicit-state checker for the TLA+ subset used in tla/*.tla.

TLC (tla2tools.jar) is in no registry the build machines reach, so this
checker gives the specs a semantic check in CI: it parses modules with the
PyPI ``tla`` package, evaluates Init and Next breadth-first, and checks the
invariants of a .cfg file, printing TLC-like messages
("Invariant X is violated." / "No error has been found.").

It is not TLC.  It covers the operators the specs use, checks no temporal
PROPERTY (they are reported as skipped), and is far slower; where it
refuses something TLC would also refuse (comparing values of different
kinds, undefined names, wrong arity) it raises ``EvalError``.

Usage: python minitlc.py [-max-states N] -config X.cfg X.tla
"""

from __future__ import annotations

import argparse
import io
import itertools
import os
import re
import sys
import time
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import redirect_stdout
from typing import Any

import tla


class EvalError(Exception):
    """The spec did something this checker (and, as far as we know, TLC) rejects."""


# --------------------------------------------------------------------------
# values
# --------------------------------------------------------------------------


class MV:
    """A TLC model value: equal only to itself, comparable with anything."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MV) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("MV", self.name))

    def __repr__(self) -> str:
        return self.name


class Fn:
    """A function (also a record when its domain is a set of strings)."""

    __slots__ = ("_h", "d")

    def __init__(self, d: dict) -> None:
        self.d = d
        self._h: int | None = None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Fn):
            return self.d == other.d
        return False

    def __hash__(self) -> int:
        if self._h is None:
            self._h = hash(frozenset(self.d.items()))
        return self._h

    def __repr__(self) -> str:
        if self.d and all(isinstance(k, str) for k in self.d):
            return "[" + ", ".join(f"{k} |-> {fmt(v)}" for k, v in sorted(self.d.items())) + "]"
        return "(" + " @@ ".join(f"{fmt(k)} :> {fmt(v)}" for k, v in self.d.items()) + ")"


def fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, str):
        return '"' + v + '"'
    if isinstance(v, tuple):
        return "<<" + ", ".join(fmt(x) for x in v) + ">>"
    if isinstance(v, frozenset):
        return "{" + ", ".join(sorted(fmt(x) for x in v)) + "}"
    return repr(v)


def kind(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, str):
        return "str"
    if isinstance(v, MV):
        return "mv"
    if isinstance(v, (tuple, Fn)):
        return "fn"
    if isinstance(v, (frozenset, LazySet)):
        return "set"
    raise EvalError(f"unknown value {v!r}")


def check_comparable(a: Any, b: Any) -> None:
    ka, kb = kind(a), kind(b)
    if ka != kb and "mv" not in (ka, kb):
        raise EvalError(f"TLC cannot compare {fmt(a)} ({ka}) with {fmt(b)} ({kb})")


def as_fn(v: Any) -> Fn:
    if isinstance(v, Fn):
        return v
    if isinstance(v, tuple):
        return Fn({i + 1: x for i, x in enumerate(v)})
    raise EvalError(f"not a function: {fmt(v)}")


def teq(a: Any, b: Any) -> bool:
    check_comparable(a, b)
    if (isinstance(a, tuple) and isinstance(b, Fn)) or (isinstance(a, Fn) and isinstance(b, tuple)):
        return as_fn(a) == as_fn(b)
    if isinstance(a, LazySet) or isinstance(b, LazySet):
        return enum(a) == enum(b)
    return a == b


class LazySet:
    """A set TLC does not enumerate unless it must."""

    def contains(self, v: Any) -> bool:
        raise NotImplementedError

    def elems(self) -> Iterable[Any]:
        raise NotImplementedError


class Subset(LazySet):
    def __init__(self, base: Any) -> None:
        self.base = base

    def contains(self, v: Any) -> bool:
        if kind(v) != "set":
            raise EvalError(f"TLC cannot decide whether {fmt(v)} is in SUBSET ...")
        return all(member(x, self.base) for x in enum(v))

    def elems(self) -> Iterable[Any]:
        b = list(enum(self.base))
        for r in range(len(b) + 1):
            for c in itertools.combinations(b, r):
                yield frozenset(c)


class FnSet(LazySet):
    def __init__(self, dom: Any, cod: Any) -> None:
        self.dom, self.cod = enum(dom), cod

    def contains(self, v: Any) -> bool:
        if kind(v) != "fn":
            raise EvalError(f"{fmt(v)} is not a function")
        f = as_fn(v)
        return frozenset(f.d) == self.dom and all(member(x, self.cod) for x in f.d.values())

    def elems(self) -> Iterable[Any]:
        dom = list(self.dom)
        for vals in itertools.product(*[list(enum(self.cod)) for _ in dom]):
            yield Fn(dict(zip(dom, vals, strict=True)))


class RecSet(LazySet):
    def __init__(self, fields: dict) -> None:
        self.fields = fields

    def contains(self, v: Any) -> bool:
        if not isinstance(v, Fn):
            raise EvalError(f"{fmt(v)} is not a record")
        return set(v.d) == set(self.fields) and all(
            member(v.d[k], s) for k, s in self.fields.items()
        )

    def elems(self) -> Iterable[Any]:
        names = list(self.fields)
        for vals in itertools.product(*[list(enum(self.fields[n])) for n in names]):
            yield Fn(dict(zip(names, vals, strict=True)))


class Union2(LazySet):
    def __init__(self, a: Any, b: Any) -> None:
        self.a, self.b = a, b

    def contains(self, v: Any) -> bool:
        return member(v, self.a) or member(v, self.b)

    def elems(self) -> Iterable[Any]:
        return enum(self.a) | enum(self.b)


class NatSet(LazySet):
    def contains(self, v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    def elems(self) -> Iterable[Any]:
        raise EvalError("cannot enumerate Nat")


def enum(s: Any) -> frozenset:
    if isinstance(s, frozenset):
        return s
    if isinstance(s, LazySet):
        return frozenset(s.elems())
    raise EvalError(f"not a set: {fmt(s)}")


def member(v: Any, s: Any) -> bool:
    if isinstance(s, LazySet):
        return s.contains(v)
    if not isinstance(s, frozenset):
        raise EvalError(f"\\in applied to a non-set {fmt(s)}")
    if v in s:
        return True
    for x in s:
        check_comparable(v, x)
        if isinstance(v, (tuple, Fn)) and teq(v, x):
            return True
    return False


def union(a: Any, b: Any) -> Any:
    if isinstance(a, frozenset) and isinstance(b, frozenset):
        return a | b
    return Union2(a, b)


def apply_fn(f: Any, args: list) -> Any:
    key = args[0] if len(args) == 1 else tuple(args)
    if isinstance(f, tuple):
        if isinstance(key, int) and 1 <= key <= len(f):
            return f[key - 1]
        raise EvalError(f"index {fmt(key)} out of the domain of {fmt(f)}")
    if isinstance(f, Fn):
        if key in f.d:
            return f.d[key]
        for k in f.d:
            check_comparable(key, k)
        raise EvalError(f"{fmt(key)} is not in the domain of {fmt(f)}")
    raise EvalError(f"applying a non-function {fmt(f)}")


def domain(f: Any) -> frozenset:
    if isinstance(f, tuple):
        return frozenset(range(1, len(f) + 1))
    return frozenset(as_fn(f).d)


# --------------------------------------------------------------------------
# modules and scopes
# --------------------------------------------------------------------------

STANDARD = {"Naturals", "Integers", "FiniteSets", "Sequences", "TLC"}
BINOPS = {"=", "#", "/=", "\\in", "\\notin", "\\subseteq", "\\cup", "\\cap", "\\", "+", "-",
          "*", "<", ">", "<=", "=<", "\\leq", ">=", "\\geq", "..", ":>", "@@", "\\o"}


_PARSED: dict[tuple[str, str], Any] = {}


def parse_file(path: str) -> Any:
    """The normalized syntax tree of the module at `path`.  Trees are immutable, and the
    parser takes seconds per module, so a tree is kept for as long as the text is the same
    (every Checker of a test session parses the same five modules)."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    key = (os.path.abspath(path), text)
    if key not in _PARSED:
        _PARSED[key] = _parse_text(path, text)
    return _PARSED[key]


def _parse_text(path: str, text: str) -> Any:
    buf = io.StringIO()
    try:
        with redirect_stdout(buf):  # the parser prints its stacks on errors
            tree = tla.parse(text)
    except Exception as exc:
        raise EvalError(f"{path}: syntax error: {exc}\n{buf.getvalue()[-2000:]}") from exc
    if tree is None:
        raise EvalError(f"{path}: the parser returned nothing")
    return normalize(tree)


_NODES = tla.make_nodes()


def normalize(node: Any) -> Any:
    """Turn bulleted /\\ and \\/ lists into ordinary operator applications."""
    if isinstance(node, list):
        return [normalize(x) for x in node]
    if not (isinstance(node, tuple) and hasattr(node, "_fields")):
        return node
    if type(node).__name__ == "VerticalList":
        return _NODES.OperatorApplication(
            operator=node.operator,
            arguments=[normalize(i.expression) for i in node.arguments],
            start=node.start, end=node.end)
    changes = {f: normalize(getattr(node, f)) for f in node._fields
               if f not in ("symbol", "start", "end")}
    return node._replace(**changes)


class Def:
    def __init__(self, name: str, params: list[str], body: Any, scope: Scope) -> None:
        self.name, self.params, self.body, self.scope = name, params, body, scope


class Scope:
    """The names visible in one module (or one instance of it)."""

    def __init__(self, module: Module, subst: dict[str, tuple[Any, Scope]] | None,
                 parent: Scope | None) -> None:
        self.module = module
        self.subst = subst or {}
        self.parent = parent
        self.cache: dict[str, Any] = {}
        self.defs: dict[str, Any] = {}
        for name, node in module.defs.items():
            if isinstance(node, tuple) and node[0] == "instance":
                self.defs[name] = ("instance", node[1], node[2])
            else:
                self.defs[name] = Def(name, node[0], node[1], self)


class Module:
    def __init__(self, path: str, directory: str, loader: Loader) -> None:
        tree = parse_file(path)
        self.name = tree.name
        self.constants: list[str] = []
        self.variables: list[str] = []
        self.defs: dict[str, Any] = {}
        self.assumes: list[Any] = []
        for ext in tree.extendees or []:
            name = ext.operator
            if name in STANDARD:
                continue
            sub = loader.load(name)
            self.constants += [c for c in sub.constants if c not in self.constants]
            self.variables += [v for v in sub.variables if v not in self.variables]
            self.defs.update(sub.defs)
            self.assumes += sub.assumes
        for unit in tree.units:
            t = type(unit).__name__
            if t == "Constants":
                for n in unit.names:
                    self.constants.append(n.operator if hasattr(n, "operator") else n.name)
            elif t == "Variables":
                self.variables += [n.operator for n in unit.names]
            elif t == "OperatorDefinition":
                self._define(unit, loader)
            elif t == "Axiom":
                self.assumes.append(unit.expression)
            elif t in ("VerticalList",):
                continue
            else:
                raise EvalError(f"{self.name}: unsupported unit {t}")

    def _define(self, unit: Any, loader: Loader) -> None:
        if unit.name in self.defs:
            raise EvalError(f"{self.name}: {unit.name} is defined twice")
        body = unit.definiens
        if type(body).__name__ == "Instance":
            sub = loader.load(body.name)
            withs = {w.name: w.expression for w in body.with_substitution or []}
            self.defs[unit.name] = ("instance", sub, withs)
            return
        params = []
        for p in unit.arity or []:
            params.append(p.operator if hasattr(p, "operator") else p.name)
        if unit.function:
            raise EvalError(f"{unit.name}: recursive function definitions are not supported")
        self.defs[unit.name] = (params, body)


class Loader:
    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.modules: dict[str, Module] = {}

    def load(self, name: str) -> Module:
        if name not in self.modules:
            self.modules[name] = Module(os.path.join(self.directory, name + ".tla"),
                                        self.directory, self)
        return self.modules[name]


class Lazy:
    """A LET definition without parameters: evaluated once, on first use."""

    __slots__ = ("done", "fn", "value")

    def __init__(self, fn: Any) -> None:
        self.fn, self.done, self.value = fn, False, None

    def get(self) -> Any:
        if not self.done:
            self.value, self.done = self.fn(), True
        return self.value


class Closure:
    def __init__(self, params: list[str], body: Any, ctx: Ctx) -> None:
        self.params, self.body, self.ctx = params, body, ctx


class Ctx:
    """Evaluation context: scope, bound names, current and next state."""

    __slots__ = ("consts", "env", "init", "nxt", "scope", "st")

    def __init__(self, scope: Scope, env: dict, st: dict, nxt: dict | None, init: bool,
                 consts: dict) -> None:
        self.scope, self.env, self.st, self.nxt, self.init, self.consts = (
            scope, env, st, nxt, init, consts)

    def bind(self, extra: dict) -> Ctx:
        env = dict(self.env)
        env.update(extra)
        return Ctx(self.scope, env, self.st, self.nxt, self.init, self.consts)

    def with_nxt(self, nxt: dict | None) -> Ctx:
        return Ctx(self.scope, self.env, self.st, nxt, self.init, self.consts)

    def in_scope(self, scope: Scope) -> Ctx:
        return Ctx(scope, {}, self.st, self.nxt, self.init, self.consts)


def params(names: list[str], values: list) -> dict:
    """Bind an operator's parameters to its arguments."""
    if len(names) != len(values):
        raise EvalError(f"{len(names)} parameters, {len(values)} arguments")
    return dict(zip(names, values, strict=True))


def opname(node: Any) -> str | None:
    return getattr(node, "operator", None) if type(node).__name__ == "OperatorApplication" else None


def strip_parens(node: Any) -> Any:
    while type(node).__name__ == "Parentheses":
        node = node.expression
    return node


# --------------------------------------------------------------------------
# the evaluator
# --------------------------------------------------------------------------


class Evaluator:
    def __init__(self, root: Scope, consts: dict, variables: list[str]) -> None:
        self.root = root
        self.consts = consts
        self.variables = set(variables)
        self.static: dict[tuple[int, str], bool] = {}

    # ---- names ----
    def lookup(self, name: str, args: list | None, ctx: Ctx) -> Any:
        if name in ctx.env:
            b = ctx.env[name]
            if isinstance(b, Lazy):
                b = b.get()
            if isinstance(b, Closure):
                vals = [self.ev(a, ctx) for a in args or []]
                if len(vals) != len(b.params):
                    raise EvalError(f"{name} takes {len(b.params)} arguments")
                return self.ev(b.body, b.ctx.bind(dict(zip(b.params, vals, strict=True))))
            if args:
                raise EvalError(f"{name} is not an operator")
            return b
        scope = ctx.scope
        while scope is not None:
            d = scope.defs.get(name)
            if isinstance(d, Def):
                return self.call(d, args or [], ctx)
            if name in scope.subst:
                expr, parent = scope.subst[name]
                key = "subst:" + name
                if key not in scope.cache:
                    scope.cache[key] = self.ev(expr, ctx.in_scope(parent))
                return scope.cache[key]
            if name in scope.module.variables or name in scope.module.constants:
                break
            scope = None
        if name in self.variables:
            if ctx.st is None or name not in ctx.st:
                raise EvalError(f"variable {name} has no value here")
            return ctx.st[name]
        if name in ctx.consts:
            return ctx.consts[name]
        return self.builtin(name, args or [], ctx)

    def is_static(self, d: Def) -> bool:
        """True when d has no parameters and mentions no variable, prime or action."""
        key = (id(d.scope), d.name)
        if key in self.static:
            return self.static[key]
        self.static[key] = False
        ok = not d.params and self._static_node(d.body, d.scope, set())
        self.static[key] = ok
        return ok

    def _static_node(self, node: Any, scope: Scope, bound: set) -> bool:
        if isinstance(node, list):
            return all(self._static_node(x, scope, bound) for x in node)
        if not (isinstance(node, tuple) and hasattr(node, "_fields")):
            return True
        t = type(node).__name__
        if t == "OperatorApplication":
            name = node.operator
            if name in ("'", "UNCHANGED", "ENABLED"):
                return False
            if name not in bound:
                if name in self.variables:
                    return False
                d = scope.defs.get(name)
                if isinstance(d, Def) and not d.params and not self.is_static(d):
                    return False
                if (isinstance(d, Def) and d.params
                        and not self._static_node(d.body, d.scope, set(d.params))):
                    return False
        if t == "SubexpressionReference":
            return False
        if t in ("Quantification", "Function", "SetComprehension", "SetSlice", "Choose", "Let"):
            bound = bound | self._bound_names(node)
        return all(self._static_node(getattr(node, f), scope, bound)
                   for f in node._fields if f not in ("symbol", "start", "end"))

    def _bound_names(self, node: Any) -> set:
        names: set = set()
        decls: list = []
        for f in ("declarations", "declaration"):
            v = getattr(node, f, None)
            if v is not None:
                decls += v if isinstance(v, list) else [v]
        for decl in decls:
            target = decl.arguments[0] if opname(decl) == "\\in" else decl
            items = target.items if type(target).__name__ == "Tuple" else [target]
            names |= {i.operator for i in items if opname(i)}
        if type(node).__name__ == "Let":
            names |= {d.name for d in node.definitions}
        return names

    def call(self, d: Def, args: list, ctx: Ctx) -> Any:
        if len(args) != len(d.params):
            raise EvalError(f"{d.name} takes {len(d.params)} arguments, got {len(args)}")
        if not d.params and self.is_static(d):
            if d.name not in d.scope.cache:
                static_ctx = Ctx(d.scope, {}, None, None, False, ctx.consts)
                d.scope.cache[d.name] = self.ev(d.body, static_ctx)
            return d.scope.cache[d.name]
        vals = [self.ev(a, ctx) for a in args]
        return self.ev(d.body, Ctx(d.scope, params(d.params, vals), ctx.st, ctx.nxt,
                                   ctx.init, ctx.consts))

    def instance_scope(self, name: str, ctx: Ctx) -> Scope:
        d = ctx.scope.defs.get(name)
        if not (isinstance(d, tuple) and d[0] == "instance"):
            raise EvalError(f"{name} is not an instance")
        key = "instance:" + name
        if key not in ctx.scope.cache:
            _, module, withs = d
            subst = {n: (e, ctx.scope) for n, e in withs.items()}
            for n in withs:
                if n not in module.constants and n not in module.variables:
                    raise EvalError(f"{module.name} declares no {n}")
            ctx.scope.cache[key] = Scope(module, subst, ctx.scope)
        return ctx.scope.cache[key]

    # ---- builtins ----
    def builtin(self, name: str, args: list, ctx: Ctx) -> Any:
        ev = self.ev
        if name == "TRUE":
            return True
        if name == "FALSE":
            return False
        if name == "Nat":
            return NatSet()
        if name in ("BOOLEAN",):
            return frozenset({True, False})
        if name == "Cardinality":
            return len(enum(ev(args[0], ctx)))
        if name == "Len":
            return len(ev(args[0], ctx))
        if name == "Append":
            return (*tuple(ev(args[0], ctx)), ev(args[1], ctx))
        raise EvalError(f"unknown name {name}")

    def binop(self, op: str, a: Any, b: Any) -> Any:
        if op == "=":
            return teq(a, b)
        if op in ("#", "/="):
            return not teq(a, b)
        if op == "\\in":
            return member(a, b)
        if op == "\\notin":
            return not member(a, b)
        if op == "\\subseteq":
            return all(member(x, b) for x in enum(a))
        if op == "\\cup":
            return union(a, b)
        if op == "\\cap":
            if isinstance(a, frozenset):
                return frozenset(x for x in a if member(x, b))
            return frozenset(x for x in enum(b) if member(x, a))
        if op == "\\":
            return frozenset(x for x in enum(a) if not member(x, b))
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "<":
            return a < b
        if op == ">":
            return a > b
        if op in ("<=", "=<", "\\leq"):
            return a <= b
        if op in (">=", "\\geq"):
            return a >= b
        if op == "..":
            return frozenset(range(a, b + 1))
        if op == ":>":
            return Fn({a: b})
        if op == "@@":
            d = dict(as_fn(b).d)
            d.update(as_fn(a).d)
            return Fn(d)
        if op == "\\o":
            return tuple(a) + tuple(b)
        raise EvalError(f"unsupported operator {op}")

    def ev(self, node: Any, ctx: Ctx) -> Any:
        t = type(node).__name__
        if t == "Parentheses":
            return self.ev(node.expression, ctx)
        if t == "IntegralNumeral":
            return int(node.value)
        if t == "StringLiteral":
            return node.value[1:-1]
        if t == "BooleanLiteral":
            return node.value == "TRUE"
        if t == "SetOfBooleans":
            return frozenset({True, False})
        if t == "SetEnumeration":
            return frozenset(self.ev(x, ctx) for x in node.items)
        if t == "Tuple":
            return tuple(self.ev(x, ctx) for x in node.items)
        if t == "Record":
            return Fn({kv[0]: self.ev(kv[1], ctx) for kv in node.key_values})
        if t == "SetOfRecords":
            return RecSet({kb.name: self.ev(kb.bound, ctx) for kb in node.key_bounds})
        if t == "SetOfFunctions":
            return FnSet(self.ev(node.domain, ctx), self.ev(node.codomain, ctx))
        if t == "Field":
            r = self.ev(node.expression, ctx)
            return apply_fn(r, [node.name])
        if t == "FunctionApplication":
            f = self.ev(node.function, ctx)
            return apply_fn(f, [self.ev(a, ctx) for a in node.arguments])
        if t == "If":
            c = self.ev(node.predicate, ctx)
            if not isinstance(c, bool):
                raise EvalError("IF condition is not a Boolean")
            return self.ev(node.then if c else node.else_, ctx)
        if t == "Cases":
            for item in node.cases:
                if self.ev(item.predicate, ctx):
                    return self.ev(item.expression, ctx)
            if node.other is not None:
                return self.ev(node.other, ctx)
            raise EvalError("no CASE arm applies")
        if t == "Let":
            return self.ev(node.expression, self.let_ctx(node, ctx))
        if t == "Quantification":
            return self.quant(node, ctx)
        if t == "Choose":
            decl = node.declaration
            for b in self.bindings(decl if isinstance(decl, list) else [decl], ctx):
                if self.truth(node.predicate, ctx.bind(b)):
                    return next(iter(b.values()))
            raise EvalError("CHOOSE found nothing")
        if t == "SetComprehension":
            return frozenset(self.ev(node.item, ctx.bind(b))
                             for b in self.bindings(node.declarations, ctx))
        if t == "SetSlice":
            decl = node.declaration
            var = decl.arguments[0].operator
            s = self.ev(decl.arguments[1], ctx)
            return frozenset(x for x in enum(s) if self.ev(node.predicate, ctx.bind({var: x})))
        if t == "Function":
            out = {}
            names = None
            for b in self.bindings(node.declaration, ctx):
                names = names or list(b)
                key = b[names[0]] if len(names) == 1 else tuple(b[n] for n in names)
                out[key] = self.ev(node.value, ctx.bind(b))
            return Fn(out)
        if t == "Except":
            return self.except_(node, ctx)
        if t == "SubexpressionReference":
            scope, d, args = self.reference(node, ctx)
            sub = Ctx(scope, {}, ctx.st, ctx.nxt, ctx.init, ctx.consts)
            if d.params:
                return self.ev(d.body, sub.bind(dict(zip(d.params, args, strict=True))))
            return self.call(d, [], sub)
        if t == "OperatorApplication":
            return self.opapp(node, ctx)
        if t == "str" and node == "@":
            return ctx.env["@"]
        raise EvalError(f"unsupported expression {t}")

    def reference(self, node: Any, ctx: Ctx) -> tuple[Scope, Def, list]:
        """Resolve Instance!Op(args)."""
        items = node.items
        if len(items) != 2:
            raise EvalError("only Instance!Op references are supported")
        scope = self.instance_scope(items[0].operator, ctx)
        target = items[1]
        name = target if isinstance(target, str) else target.operator
        d = scope.defs.get(name)
        if not isinstance(d, Def):
            raise EvalError(f"no {name} in {scope.module.name}")
        args = [] if isinstance(target, str) else [self.ev(a, ctx) for a in target.arguments or []]
        if len(args) != len(d.params):
            raise EvalError(f"{name} takes {len(d.params)} arguments, got {len(args)}")
        return scope, d, args

    def let_ctx(self, node: Any, ctx: Ctx) -> Ctx:
        env = dict(ctx.env)
        new = Ctx(ctx.scope, env, ctx.st, ctx.nxt, ctx.init, ctx.consts)
        for d in node.definitions:
            params = [p.operator if hasattr(p, "operator") else p.name for p in d.arity or []]
            if params:
                env[d.name] = Closure(params, d.definiens, new)
            else:
                env[d.name] = Lazy(lambda d=d: self.ev(d.definiens, new))
        return new

    def bindings(self, decls: list, ctx: Ctx) -> Iterator[dict]:
        """All assignments of the bound names of `x \\in S, y \\in T`."""
        groups = []
        for decl in decls:
            if opname(decl) != "\\in":
                raise EvalError("only bounded quantifiers are supported")
            target, bound = decl.arguments
            groups.append((target, list(enum(self.ev(bound, ctx)))))

        def names_of(target: Any, v: Any) -> dict:
            if type(target).__name__ == "Tuple":
                if not isinstance(v, tuple) or len(v) != len(target.items):
                    raise EvalError("tuple pattern does not match")
                return {i.operator: x for i, x in zip(target.items, v, strict=True)}
            return {target.operator: v}

        for combo in itertools.product(*[g[1] for g in groups]):
            b: dict = {}
            for (target, _), v in zip(groups, combo, strict=True):
                b.update(names_of(target, v))
            yield b

    def quant(self, node: Any, ctx: Ctx) -> bool:
        if node.quantifier == "\\A":
            return all(self.truth(node.predicate, ctx.bind(b))
                       for b in self.bindings(node.declarations, ctx))
        if node.quantifier == "\\E":
            return any(self.truth(node.predicate, ctx.bind(b))
                       for b in self.bindings(node.declarations, ctx))
        raise EvalError(f"unsupported quantifier {node.quantifier}")

    def truth(self, node: Any, ctx: Ctx) -> bool:
        v = self.ev(node, ctx)
        if not isinstance(v, bool):
            raise EvalError(f"expected a Boolean, got {fmt(v)}")
        return v

    def except_(self, node: Any, ctx: Ctx) -> Any:
        f = self.ev(node.function, ctx)
        for change in node.changes:
            path = []
            for item in change.item:
                if isinstance(item, str):
                    path.append(item)
                else:
                    vals = [self.ev(a, ctx) for a in item]
                    path.append(vals[0] if len(vals) == 1 else tuple(vals))
            f = self._update(f, path, change.expression, ctx)
        return f

    def _update(self, f: Any, path: list, expr: Any, ctx: Ctx) -> Any:
        fn = as_fn(f)
        key = path[0]
        old = apply_fn(fn, [key])
        if len(path) == 1:
            new = self.ev(expr, ctx.bind({"@": old}))
        else:
            new = self._update(old, path[1:], expr, ctx)
        d = dict(fn.d)
        d[key] = new
        if isinstance(f, tuple):
            return tuple(d[i + 1] for i in range(len(f)))
        return Fn(d)

    def opapp(self, node: Any, ctx: Ctx) -> Any:
        op = node.operator
        args = node.arguments or []
        if op == "/\\":
            return all(self.truth(a, ctx) for a in args)
        if op == "\\/":
            return any(self.truth(a, ctx) for a in args)
        if op in ("~", "\\lnot", "\\neg"):
            return not self.truth(args[0], ctx)
        if op == "=>":
            return (not self.truth(args[0], ctx)) or self.truth(args[1], ctx)
        if op in ("<=>", "\\equiv"):
            return self.truth(args[0], ctx) == self.truth(args[1], ctx)
        if op == "'":
            inner = strip_parens(args[0])
            name = opname(inner)
            if name in self.variables and not inner.arguments:
                if ctx.nxt is None or name not in ctx.nxt:
                    raise EvalError(f"{name}' is read before it is assigned")
                return ctx.nxt[name]
            raise EvalError("priming of an expression is not supported")
        if op == "SUBSET":
            return Subset(self.ev(args[0], ctx))
        if op == "UNION":
            out: frozenset = frozenset()
            for s in enum(self.ev(args[0], ctx)):
                out |= enum(s)
            return out
        if op == "DOMAIN":
            return domain(self.ev(args[0], ctx))
        if op == "\\X":
            sets = [list(enum(self.ev(a, ctx))) for a in args]
            return frozenset(itertools.product(*sets))
        if op == "-" and len(args) == 1:
            return -self.ev(args[0], ctx)
        if op == "UNCHANGED" or op in ("[]", "<>", "~>", "ENABLED"):
            raise EvalError(f"{op} outside an action context")
        if len(args) == 2 and op in BINOPS and not self._is_user(op, ctx):
            return self.binop(op, self.ev(args[0], ctx), self.ev(args[1], ctx))
        return self.lookup(op, args, ctx)

    def _is_user(self, name: str, ctx: Ctx) -> bool:
        return name in ctx.env or name in ctx.scope.defs

    # ---- actions: each result is the next-state assignment of one branch ----
    def act(self, node: Any, ctx: Ctx) -> list[dict]:
        t = type(node).__name__
        if t == "Parentheses":
            return self.act(node.expression, ctx)
        if t == "If":
            c = self.truth(node.predicate, ctx)
            return self.act(node.then if c else node.else_, ctx)
        if t == "Let":
            return self.act(node.expression, self.let_ctx(node, ctx))
        if t == "Quantification" and node.quantifier == "\\E":
            out = []
            for b in self.bindings(node.declarations, ctx):
                out += self.act(node.predicate, ctx.bind(b))
            return out
        if t == "SubexpressionReference":
            scope, d, args = self.reference(node, ctx)
            sub = Ctx(scope, params(d.params, args), ctx.st, ctx.nxt, ctx.init, ctx.consts)
            return self.act(d.body, sub)
        if t == "OperatorApplication":
            op = node.operator
            args = node.arguments or []
            if op == "/\\":
                branches = [ctx.nxt]
                for a in args:
                    new = []
                    for nxt in branches:
                        new += self.act(a, ctx.with_nxt(nxt))
                    branches = new
                    if not branches:
                        break
                return branches
            if op == "\\/":
                out = []
                for a in args:
                    out += self.act(a, ctx)
                return out
            if op == "UNCHANGED":
                nxt = dict(ctx.nxt)
                for name in self._var_names(args[0]):
                    if name in nxt:
                        if not teq(nxt[name], ctx.st[name]):
                            return []
                    else:
                        nxt[name] = ctx.st[name]
                return [nxt]
            if op == "=":
                lhs = strip_parens(args[0])
                var = None
                if ctx.init and opname(lhs) in self.variables and not lhs.arguments:
                    var = lhs.operator
                elif not ctx.init and opname(lhs) == "'":
                    inner = strip_parens(lhs.arguments[0])
                    if opname(inner) in self.variables and not inner.arguments:
                        var = inner.operator
                if var is not None and var not in ctx.nxt:
                    nxt = dict(ctx.nxt)
                    nxt[var] = self.ev(args[1], ctx)
                    return [nxt]
                if var is not None:
                    return [ctx.nxt] if teq(ctx.nxt[var], self.ev(args[1], ctx)) else []
            if op == "\\in":
                lhs = strip_parens(args[0])
                var = None
                if ctx.init and opname(lhs) in self.variables and not lhs.arguments:
                    var = lhs.operator
                elif not ctx.init and opname(lhs) == "'":
                    var = strip_parens(lhs.arguments[0]).operator
                if var is not None and var not in ctx.nxt:
                    out = []
                    for v in enum(self.ev(args[1], ctx)):
                        nxt = dict(ctx.nxt)
                        nxt[var] = v
                        out.append(nxt)
                    return out
            d = ctx.scope.defs.get(op) if op not in ctx.env else None
            if isinstance(d, Def) and not self.is_static(d):
                vals = [self.ev(a, ctx) for a in args]
                if len(vals) != len(d.params):
                    raise EvalError(f"{op} takes {len(d.params)} arguments")
                return self.act(d.body, Ctx(d.scope, params(d.params, vals), ctx.st,
                                            ctx.nxt, ctx.init, ctx.consts))
            if op in ctx.env and isinstance(ctx.env[op], Closure):
                c = ctx.env[op]
                vals = [self.ev(a, ctx) for a in args]
                return self.act(c.body, c.ctx.bind(params(c.params, vals)).with_nxt(ctx.nxt))
        return [ctx.nxt] if self.truth(node, ctx) else []

    def _var_names(self, node: Any) -> list[str]:
        node = strip_parens(node)
        if type(node).__name__ == "Tuple":
            out = []
            for x in node.items:
                out += self._var_names(x)
            return out
        name = opname(node)
        if name in self.variables:
            return [name]
        d = self.root.defs.get(name)
        if isinstance(d, Def) and not d.params:
            return self._var_names(d.body)
        raise EvalError(f"UNCHANGED of {name}: not a variable or a tuple of variables")


# --------------------------------------------------------------------------
# name resolution: the part of SANY's semantic check that catches the usual
# slips (a name used before its definition, an undefined name, a wrong
# number of arguments, a standard operator whose module is not extended,
# an INSTANCE whose implicit substitutions have nothing to bind to)
# --------------------------------------------------------------------------

STANDARD_OPS = {
    "Naturals": {"Nat", "+", "-", "*", "^", "<", ">", "<=", "=<", "\\leq", ">=", "\\geq",
                 "\\div", "%", ".."},
    "Integers": {"Int"},
    "FiniteSets": {"IsFiniteSet", "Cardinality"},
    "Sequences": {"Seq", "Len", "\\o", "Append", "Head", "Tail", "SubSeq", "SelectSeq"},
    "TLC": {"Print", "PrintT", "Assert", "JavaTime", ":>", "@@", "Permutations", "SortSeq",
            "ToString", "RandomElement", "Any", "TLCGet", "TLCSet", "TLCEval"},
}
STANDARD_ARITY = {"Nat": 0, "Int": 0, "IsFiniteSet": 1, "Cardinality": 1, "Seq": 1, "Len": 1,
                  "Append": 2, "Head": 1, "Tail": 1, "SubSeq": 3, "SelectSeq": 2,
                  "Print": 2, "PrintT": 1, "Assert": 2, "JavaTime": 0, "Permutations": 1,
                  "SortSeq": 2, "ToString": 1, "RandomElement": 1, "Any": 0, "TLCGet": 1,
                  "TLCSet": 2, "TLCEval": 1}
BUILTIN = {"TRUE", "FALSE", "BOOLEAN", "STRING", "SUBSET", "UNION", "DOMAIN", "UNCHANGED",
           "ENABLED", "'", "[]", "<>", "~>", "-+->", "\\cdot", "/\\", "\\/", "~", "\\lnot",
           "\\neg", "=>", "<=>", "\\equiv", "=", "#", "/=", "\\in", "\\notin", "\\subseteq",
           "\\subset", "\\supseteq", "\\supset", "\\cup", "\\union", "\\cap", "\\intersect",
           "\\", "\\X", "\\times"}
IDENT = re.compile(r"^[A-Za-z0-9_]*[A-Za-z][A-Za-z0-9_]*$")


class NameChecker:
    """Check that every name a module uses is defined, in order, with its arity."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.trees: dict[str, Any] = {}
        self.errors: list[str] = []
        self.exports: dict[str, tuple[dict, set, set, set]] = {}

    def tree(self, name: str) -> Any:
        if name not in self.trees:
            self.trees[name] = parse_file(os.path.join(self.directory, name + ".tla"))
        return self.trees[name]

    def check(self, name: str) -> tuple[dict, set, set, set]:
        """Return (names -> arity or ("instance", module), standard modules,
        constants, variables) visible at the end of module `name`."""
        if name in self.exports:
            return self.exports[name]
        tree = self.tree(name)
        if tree.name != name:
            self.errors.append(f"{name}.tla declares MODULE {tree.name}")
        visible: dict[str, Any] = {}
        std: set = set()
        consts: set = set()
        variables: set = set()
        for ext in tree.extendees or []:
            e = ext.operator
            if e in STANDARD_OPS:
                std.add(e)
                if e == "Integers":
                    std.add("Naturals")
                continue
            v2, s2, c2, var2 = self.check(e)
            visible.update(v2)
            std |= s2
            consts |= c2
            variables |= var2
        self.module = name
        for unit in tree.units:
            t = type(unit).__name__
            if t in ("Constants", "Variables"):
                for n in unit.names:
                    nm = n.operator if hasattr(n, "operator") else n.name
                    arity = len(n.arguments) if getattr(n, "arguments", None) else 0
                    self._declare(nm, arity, visible)
                    (consts if t == "Constants" else variables).add(nm)
            elif t == "OperatorDefinition":
                self._definition(unit, visible, std, consts, variables)
            elif t == "Axiom":
                self.expr(unit.expression, visible, std, set())
            else:
                self.errors.append(f"{name}: unchecked unit {t}")
        self.exports[name] = (visible, std, consts, variables)
        return self.exports[name]

    def _declare(self, nm: str, arity: Any, visible: dict) -> None:
        if nm in visible:
            self.errors.append(f"{self.module}: {nm} is defined more than once")
        visible[nm] = arity

    def _definition(self, unit: Any, visible: dict, std: set, consts: set, variables: set) -> None:
        body = unit.definiens
        if type(body).__name__ == "Instance":
            sub = body.name
            current = self.module
            v2, _, c2, var2 = self.check(sub)
            self.module = current
            withs = {w.name for w in body.with_substitution or []}
            for w in body.with_substitution or []:
                if w.name not in c2 and w.name not in var2:
                    self.errors.append(f"{self.module}: {sub} declares no {w.name}")
                self.expr(w.expression, visible, std, set())
            for implicit in sorted((c2 | var2) - withs):
                if implicit not in visible:
                    self.errors.append(f"{self.module}: INSTANCE {sub} needs {implicit}, "
                                       f"which is not defined here")
            self._declare(unit.name, ("instance", v2), visible)
            return
        params = [p.operator if hasattr(p, "operator") else p.name for p in unit.arity or []]
        self.expr(body, visible, std, set(params))
        self._declare(unit.name, len(params), visible)

    def expr(self, node: Any, visible: dict, std: set, bound: set) -> None:
        if isinstance(node, list):
            for x in node:
                self.expr(x, visible, std, bound)
            return
        if not (isinstance(node, tuple) and hasattr(node, "_fields")):
            return
        t = type(node).__name__
        if t == "OperatorApplication":
            self.use(node.operator, len(node.arguments or []), visible, std, bound, node)
            self.expr(node.arguments or [], visible, std, bound)
            return
        if t in ("Quantification", "Function", "SetComprehension", "SetSlice", "Choose"):
            decls = getattr(node, "declarations", None) or getattr(node, "declaration", None)
            decls = decls if isinstance(decls, list) else [decls]
            inner = set(bound)
            for decl in decls:
                if opname(decl) == "\\in":
                    self.expr(decl.arguments[1], visible, std, bound)
                    target = decl.arguments[0]
                else:
                    target = decl
                items = target.items if type(target).__name__ == "Tuple" else [target]
                inner |= {i.operator for i in items}
            for f in ("predicate", "value", "item"):
                if getattr(node, f, None) is not None:
                    self.expr(getattr(node, f), visible, std, inner)
            return
        if t == "Let":
            inner = set(bound)
            local = dict(visible)
            for d in node.definitions:
                params = {p.operator if hasattr(p, "operator") else p.name for p in d.arity or []}
                self.expr(d.definiens, local, std, inner | params)
                local[d.name] = len(params)
            self.expr(node.expression, local, std, inner)
            return
        if t == "SubexpressionReference":
            inst = node.items[0].operator
            target = node.items[1]
            name = target if isinstance(target, str) else target.operator
            args = [] if isinstance(target, str) else target.arguments or []
            info = visible.get(inst)
            if not (isinstance(info, tuple) and info[0] == "instance"):
                self.errors.append(f"{self.module}: {inst} is not an instance")
            elif name not in info[1]:
                self.errors.append(f"{self.module}: {inst}!{name} is not defined")
            elif info[1][name] != len(args):
                self.errors.append(f"{self.module}: {inst}!{name} takes {info[1][name]} "
                                   f"arguments, given {len(args)}")
            self.expr(args, visible, std, bound)
            return
        for f in node._fields:
            if f not in ("symbol", "start", "end"):
                self.expr(getattr(node, f), visible, std, bound)

    def use(self, name: str, nargs: int, visible: dict, std: set, bound: set, node: Any) -> None:
        where = f"{self.module}:{node.start.line + 1 if node.start else '?'}"
        if name in bound:
            if nargs:
                self.errors.append(f"{where}: {name} is not an operator")
            return
        if name in visible:
            arity = visible[name]
            if isinstance(arity, tuple):
                self.errors.append(f"{where}: instance {name} used as a value")
            elif arity != nargs:
                self.errors.append(f"{where}: {name} takes {arity} arguments, given {nargs}")
            return
        if name in BUILTIN:
            return
        for mod, ops in STANDARD_OPS.items():
            if name in ops:
                if mod not in std:
                    self.errors.append(f"{where}: {name} needs EXTENDS {mod}")
                elif name in STANDARD_ARITY and STANDARD_ARITY[name] != nargs:
                    self.errors.append(f"{where}: {name} takes {STANDARD_ARITY[name]} arguments")
                return
        if IDENT.match(name):
            self.errors.append(f"{where}: {name} is not defined (or is used before its "
                               f"definition)")
        else:
            self.errors.append(f"{where}: unknown operator {name}")


def check_names(path: str) -> list[str]:
    """Errors in the module at `path` and the modules it uses."""
    directory = os.path.dirname(os.path.abspath(path))
    checker = NameChecker(directory)
    checker.check(os.path.splitext(os.path.basename(path))[0])
    return checker.errors


# --------------------------------------------------------------------------
# configuration and the search
# --------------------------------------------------------------------------


def parse_cfg(text: str) -> dict:
    text = re.sub(r"\\\*.*", "", text)
    text = re.sub(r"\(\*.*?\*\)", "", text, flags=re.S)
    cfg: dict = {"constants": {}, "invariants": [], "properties": [], "spec": None,
                 "init": None, "next": None, "deadlock": True, "constraints": []}
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        head = line.split()[0]
        rest = line[len(head):].strip()
        if head in ("CONSTANT", "CONSTANTS"):
            section = "constants"
            line = rest
        elif head in ("INVARIANT", "INVARIANTS"):
            section = "invariants"
            line = rest
        elif head in ("PROPERTY", "PROPERTIES"):
            section = "properties"
            line = rest
        elif head in ("CONSTRAINT", "CONSTRAINTS"):
            section = "constraints"
            line = rest
        elif head == "SPECIFICATION":
            cfg["spec"] = rest
            section = None
            continue
        elif head == "INIT":
            cfg["init"] = rest
            section = None
            continue
        elif head == "NEXT":
            cfg["next"] = rest
            section = None
            continue
        elif head == "CHECK_DEADLOCK":
            cfg["deadlock"] = rest == "TRUE"
            section = None
            continue
        elif head in ("SYMMETRY", "VIEW", "ALIAS", "POSTCONDITION"):
            raise EvalError(f"{head} is not supported")
        if not line:
            continue
        if section == "constants":
            m = re.match(r"(\w+)\s*(=|<-)\s*(.+)$", line)
            if not m:
                raise EvalError(f"bad constant line: {raw}")
            cfg["constants"][m.group(1)] = (m.group(2), m.group(3).strip())
        elif section in ("invariants", "properties", "constraints"):
            cfg[section] += line.split()
        else:
            raise EvalError(f"cannot read cfg line: {raw}")
    return cfg


def cfg_value(text: str, name: str) -> Any:
    text = text.strip()
    if text == name or (re.fullmatch(r"[A-Za-z_]\w*", text) and text not in ("TRUE", "FALSE")):
        return MV(text)
    if text in ("TRUE", "FALSE"):
        return text == "TRUE"
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if text.startswith('"'):
        return text[1:-1]
    if text.startswith("{"):
        inner = text[1:-1].strip()
        if not inner:
            return frozenset()
        return frozenset(cfg_value(x, "") for x in re.split(r"\s*,\s*", inner))
    raise EvalError(f"unsupported cfg value {text}")


class Checker:
    def __init__(self, tla_path: str, cfg_path: str, deadlock: bool | None = None) -> None:
        """`deadlock=False` is TLC's ``-deadlock`` flag (a state without successors is not an
        error); None keeps what the cfg says (CHECK_DEADLOCK, default TRUE as in TLC)."""
        directory = os.path.dirname(os.path.abspath(tla_path))
        self.loader = Loader(directory)
        name = os.path.splitext(os.path.basename(tla_path))[0]
        self.module = self.loader.load(name)
        with open(cfg_path, encoding="utf-8") as fh:
            self.cfg = parse_cfg(fh.read())
        if deadlock is not None:
            self.cfg["deadlock"] = deadlock
        self.root = Scope(self.module, None, None)
        consts: dict = {}
        for cname, (kind_, text) in self.cfg["constants"].items():
            if cname not in self.module.constants:
                raise EvalError(f"the cfg sets {cname}, which {name} does not declare")
            if kind_ == "<-":
                raise EvalError("constant substitution (<-) is not supported")
            consts[cname] = cfg_value(text, cname)
        missing = [c for c in self.module.constants if c not in consts]
        if missing:
            raise EvalError(f"the cfg gives no value to {missing}")
        self.consts = consts
        self.vars = list(self.module.variables)
        self.ev = Evaluator(self.root, consts, self.vars)
        for a in self.module.assumes:
            if not self.ev.truth(a, self.ctx(None)):
                raise EvalError("an ASSUME is false")
        self.init, self.next = self._spec()
        for inv in self.cfg["invariants"] + self.cfg["constraints"]:
            if not isinstance(self.root.defs.get(inv), Def):
                raise EvalError(f"no definition {inv}")

    def ctx(self, st: dict | None, nxt: dict | None = None, init: bool = False) -> Ctx:
        return Ctx(self.root, {}, st, nxt, init, self.consts)

    def _spec(self) -> tuple[Any, Any]:
        if self.cfg["spec"]:
            d = self.root.defs[self.cfg["spec"]]
            conj = self._conjuncts(d.body)
            init = nxt = None
            for c in conj:
                c = strip_parens(c)
                if opname(c) == "[]" and type(c.arguments[0]).__name__ == "SubscriptedAction":
                    nxt = c.arguments[0].action
                elif opname(c) and init is None and not c.arguments:
                    init = c
            if init is None or nxt is None:
                raise EvalError("cannot find Init /\\ [][Next]_vars in the specification")
            return init, nxt
        return (self.root.defs[self.cfg["init"]].body, self.root.defs[self.cfg["next"]].body)

    def _conjuncts(self, node: Any) -> list:
        node = strip_parens(node)
        if opname(node) == "/\\":
            out = []
            for a in node.arguments:
                out += self._conjuncts(a)
            return out
        return [node]

    def freeze(self, st: dict) -> tuple:
        return tuple(st[v] for v in self.vars)

    def run(self, max_states: int | None = None, out=sys.stdout) -> int:
        """Check this cfg alone: a breadth-first search of the state graph, stopping at the
        first state that breaks an invariant (see :func:`_search`, which it shares with
        :func:`check_group`).  Returns TLC's exit code and prints TLC-like output."""
        code, text = _search({"cfg": self}, max_states)["cfg"]
        out.write(text if text.endswith("\n") else text + "\n")
        return code

    def violated(self, st: dict) -> str | None:
        for inv in self.cfg["invariants"]:
            d = self.root.defs[inv]
            if not self.ev.truth(d.body, self.ctx(st)):
                return inv
        return None

    def report(self, inv: str, key: tuple, seen: dict, out: Any, t0: float) -> int:
        print(f"Error: Invariant {inv} is violated.", file=out)
        self.trace(key, seen, out)
        print(f"{len(seen)} distinct states found ({time.time() - t0:.1f}s)", file=out)
        return 12

    def trace(self, key: tuple, seen: dict, out: Any) -> None:
        chain = []
        k: tuple | None = key
        while k is not None:
            chain.append(k)
            k = seen[k]
        print("Error: The behavior up to this point is:", file=out)
        prev = None
        for i, st in enumerate(reversed(chain), 1):
            print(f"State {i}:", file=out)
            for v, val in zip(self.vars, st, strict=True):
                if prev is None or prev[self.vars.index(v)] != val:
                    print(f"/\\ {v} = {fmt(val)}", file=out)
            prev = st


def _group_key(checker: Checker) -> tuple:
    cfg = checker.cfg
    return (checker.module.name, tuple(sorted((k, repr(v)) for k, v in checker.consts.items())),
            cfg["spec"], cfg["init"], cfg["next"], cfg["deadlock"], tuple(cfg["constraints"]))


def check_group(tla_path: str, cfg_paths: list[str], max_states: int | None = None,
                deadlock: bool | None = None) -> dict[str, tuple[int, str]]:
    """Check several .cfg files of one module that differ only in their INVARIANTS, with
    one breadth-first search instead of one each; return {cfg path: (exit code, output)}.

    Why this gives each cfg the result a run of its own gives: the state graph, and the
    order in which a breadth-first search meets its states, do not depend on the
    invariants.  A cfg's result is fixed at the first state (in that order) that breaks one
    of its invariants — the state a run of its own would stop at, with the same trace and
    the same count of distinct states — or, if no state does, by the whole graph.  The
    search stops once every cfg has its result.  TEMPORAL properties are skipped, as in
    :meth:`Checker.run`."""
    checkers = {p: Checker(tla_path, p, deadlock=deadlock) for p in cfg_paths}
    first = checkers[cfg_paths[0]]
    for path, checker in checkers.items():
        if _group_key(checker) != _group_key(first):
            raise EvalError(f"{path} differs from {cfg_paths[0]} in more than its invariants")
    return _search(checkers, max_states)


def _search(checkers: dict[str, Checker], max_states: int | None,
            ) -> dict[str, tuple[int, str]]:
    """The breadth-first search behind :meth:`Checker.run` and :func:`check_group`, for
    checkers of one state graph; {name: (exit code, output)}."""
    first = next(iter(checkers.values()))
    t0 = time.time()
    results: dict[str, tuple[int, str]] = {}
    needed = {p: list(c.cfg["invariants"]) for p, c in checkers.items()}

    def settle(st: dict, key: tuple, seen: dict) -> bool:
        """Record every open cfg that `st` violates; True when none is left open."""
        broken: dict[str, bool] = {}
        for path in [p for p in needed if p not in results]:
            for inv in needed[path]:
                if inv not in broken:
                    d = first.root.defs[inv]
                    broken[inv] = not first.ev.truth(d.body, first.ctx(st))
                if broken[inv]:
                    out = io.StringIO()
                    props = checkers[path].cfg["properties"]
                    if props:
                        print(f"Temporal properties not checked by this checker: "
                              f"{', '.join(props)}", file=out)
                    results[path] = (first.report(inv, key, seen, out, t0), out.getvalue())
                    break
        return len(results) == len(needed)

    seen: dict[tuple, tuple | None] = {}
    queue: deque = deque()
    for st in first.ev.act(first.init, first.ctx({}, {}, init=True)):
        if set(st) != set(first.vars):
            raise EvalError(f"Init leaves {set(first.vars) - set(st)} undefined")
        key = first.freeze(st)
        if key not in seen:
            seen[key] = None
            queue.append(st)
            if settle(st, key, seen):
                return results
    generated = 0
    while queue:
        st = queue.popleft()
        key = first.freeze(st)
        succ = first.ev.act(first.next, first.ctx(st, {}))
        if not succ and first.cfg["deadlock"]:
            out = io.StringIO()
            print("Error: Deadlock reached.", file=out)
            first.trace(key, seen, out)
            for path in needed:
                results.setdefault(path, (11, out.getvalue()))
            return results
        for nxt in succ:
            generated += 1
            if set(nxt) != set(first.vars):
                raise EvalError(f"a step leaves {set(first.vars) - set(nxt)} undefined")
            k2 = first.freeze(nxt)
            if k2 in seen:
                continue
            seen[k2] = key
            if settle(nxt, k2, seen):
                return results
            if all(first.ev.truth(first.root.defs[c].body, first.ctx(nxt))
                   for c in first.cfg["constraints"]):
                queue.append(nxt)
            if max_states and len(seen) >= max_states:
                for path in needed:
                    results.setdefault(path, (75, f"Stopped: more than {max_states} "
                                                 f"distinct states."))
                return results
    for path in needed:
        if path not in results:
            props = checkers[path].cfg["properties"]
            skipped = (f"Temporal properties not checked by this checker: {', '.join(props)}\n"
                       if props else "")
            results[path] = (0, f"{skipped}Model checking completed. No error has been found.\n"
                                f"{generated} states generated, {len(seen)} distinct states "
                                f"found, 0 states left on queue. ({time.time() - t0:.1f}s)\n")
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-config", required=True)
    ap.add_argument("-max-states", type=int, default=None)
    ap.add_argument("-deadlock", action="store_true",
                    help="do not report deadlock (as TLC's -deadlock)")
    ap.add_argument("spec")
    a = ap.parse_args(argv)
    try:
        return Checker(a.spec, a.config, deadlock=False if a.deadlock else None).run(
            a.max_states)
    except EvalError as exc:
        print(f"Error: {exc}")
        return 150


if __name__ == "__main__":
    sys.exit(main())
