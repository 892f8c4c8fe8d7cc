"""OpenCL C text of MCPL expressions: the names and words OpenCL reserves, the
built-ins MCPL calls map to, the variables of a kernel being generated, and the
printer of expressions (array indexing of tiles and views, calls, atomics)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from mcl.diagnostics import McplError, error
from mcl.mcpl import ast
from mcl.mcpl.check_common import is_builtin_stub, stub_writes
from mcl.opencl.index_checks import IndexSite, check_call, passed_privates
from mcl.opencl.plan import evaluate

if TYPE_CHECKING:
    from mcl.opencl.generate import _KernelGen

#: Words an MCPL name may be but an OpenCL C identifier may not.
RESERVED = frozenset("""
auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef
union unsigned void volatile while bool true false half uchar ushort uint ulong size_t
ptrdiff_t intptr_t uintptr_t kernel __kernel global __global local __local constant
__constant private __private read_only write_only read_write image2d_t image3d_t
sampler_t event_t complex imaginary vec_type_hint reqd_work_group_size
""".split())

#: OpenCL built-in functions a helper function or a kernel must not be called like.
BUILTIN_FUNCTIONS = frozenset("""
min max clamp mix step smoothstep sign dot cross length distance normalize select abs fabs
sqrt rsqrt exp exp2 log log2 log10 sin cos tan tanh erf floor ceil round pow fma fmin fmax
mad barrier atomic_add atomic_sub atomic_inc atomic_dec atomic_min atomic_max atomic_xchg
atomic_and atomic_or atomic_xor atomic_cmpxchg get_global_id get_local_id get_group_id
get_global_size get_local_size get_num_groups get_work_dim get_global_offset any all
printf shuffle shuffle2 bitselect isnan isinf isfinite cbrt hypot exp10 expm1 log1p sinh
cosh asin acos atan atan2 trunc rint fract modf frexp ldexp remainder degrees radians
popcount clz rotate mul24 mad24 hadd rhadd abs_diff add_sat sub_sat mul_hi fast_distance
fast_length fast_normalize mem_fence read_mem_fence write_mem_fence prefetch
async_work_group_copy wait_group_events vload2 vload4 vstore2 vstore4 nan
""".split())

#: MCPL built-in math -> OpenCL function (same name unless listed)
_FLOAT_MATH = ("sqrt", "rsqrt", "exp", "exp2", "log", "log2", "log10", "sin", "cos", "tan",
               "tanh", "erf", "fabs", "floor", "ceil", "round", "pow", "fmin", "fmax", "fma")
#: lib.atomics and the built-in atomicAdd -> OpenCL 1.1 atomic functions (int)
ATOMICS = {"atomicAdd": "atomic_add", "atomicSub": "atomic_sub", "atomicMin": "atomic_min",
           "atomicMax": "atomic_max", "atomicAnd": "atomic_and", "atomicOr": "atomic_or",
           "atomicXor": "atomic_xor", "atomicInc": "atomic_inc", "atomicDec": "atomic_dec",
           "atomicExchange": "atomic_xchg"}

#: byte (8-bit unsigned, OpenCL uchar) promotes to int in arithmetic, as in C.
_RANK = {"bool": 0, "byte": 1, "int": 2, "long": 3, "float": 4, "double": 5}
_SIZES = {"float": 4, "double": 8, "int": 4, "long": 8, "bool": 1, "byte": 1}
_PREC = {**ast.BINARY_PRECEDENCE}
_UNARY_PREC = 11
_ATOM = 12

#: the type of the element offsets into arrays in device memory (``int`` unless the
#: program is built with ``-D MCL_OFFSET=long``: mcl.opencl.plan.LaunchPlan.offset_option)
OFFSET_MACRO = "MCL_OFFSET"


@dataclass
class _Var:
    name: str
    cname: str
    type: ast.Type
    kind: str                       # param | local | const | index | view
    qualifier: str = "__private"
    space: str | None = None
    init: ast.Expr | None = None    # definition of a const scalar (for size expressions)
    base: _Var | None = None        # views: the viewed variable
    tiled: bool = False             # views: per-dimension tiling of a multi-dim base
    by_pointer: bool = False        # a written scalar parameter, passed as a 1-element buffer
    uniform: bool = False           # the index of a work-group loop: one value per work-group
    read: bool = False
    written: bool = False
    module_level: bool = False      # a module-level constant (a __constant of the program)

    @property
    def root(self) -> _Var:
        v = self
        while v.base is not None:
            v = v.base
        return v


def _wide(root: _Var) -> bool:
    """Whether the element offsets into ``root`` are computed as ``MCL_OFFSET``: an
    array parameter in device memory (a kernel's or a helper's), whose sizes are the
    call's and whose elements may number 2^31 or more."""
    return root.kind == "param" and root.type.is_array and \
        root.qualifier in ("__global", "__constant")


_T = TypeVar("_T")


def _store_target(root: _Var | None, op: str, render: Callable[[], _T]) -> _T:
    """``render()``: the text of a store's target, which marks the indexed array
    (``root``) read; a plain store (``op`` "=") writes the array without reading it,
    so the array keeps the read flag it had."""
    was_read = root.read if root is not None else False
    out = render()
    if root is not None and op == "=":
        root.read = was_read
    return out


def _err(code: str, message: str, node: ast.Node | None, hint: str | None = None) -> McplError:
    span = node.span if node is not None and node.span.file != "<generated>" else None
    return McplError(error(code, message, span, hint))


def _is_kernel(f: ast.Function) -> bool:
    return any(isinstance(n, ast.ForEach) for n in ast.walk(f.body))


# --------------------------------------------------------------------------- expressions


@dataclass(frozen=True)
class _Paren(ast.Expr):
    """An inlined definition: printed in parentheses when needed, like any operand."""

    inner: ast.Expr


def _names(f: ast.Function) -> set[str]:
    """Every name used or declared in ``f``."""
    out = {p.name for p in f.params}
    for n in ast.walk(f):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Declaration):
            out.add(n.name)
    return out


def _fixed(f: ast.Function) -> dict[str, ast.Expr]:
    """The initial values of the scalar locals of ``f`` that are declared once and
    never assigned: each such name stands for its definition wherever it is seen."""
    count: dict[str, int] = {}
    init: dict[str, ast.Expr] = {}
    assigned = {p.name for p in f.params}
    for n in ast.walk(f):
        if isinstance(n, ast.Declaration):
            count[n.name] = count.get(n.name, 0) + 1
            if n.init is not None and not n.type.is_array and n.type.name == "int":
                init[n.name] = n.init
        elif isinstance(n, ast.Assign | ast.IncDec) and isinstance(n.target, ast.Name):
            assigned.add(n.target.id)
    return {k: e for k, e in init.items() if count[k] == 1 and k not in assigned}


def c_escape(text: str) -> str:
    """``text`` as the inside of a C string literal (backslashes and quotes escaped)."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def root_name(e: ast.Expr) -> ast.Name | None:
    """The array an indexed or field expression reads (``a`` of ``a[i].x``), or None
    where it is not a name."""
    while isinstance(e, ast.Index | ast.Field):
        e = e.base
    return e if isinstance(e, ast.Name) else None


def _ctype(name: str, gen: _KernelGen) -> str:
    if name == "byte":
        return "uchar"
    return name if name in ast.PRIMITIVE_TYPES else gen.cname(name)


def _simple(s: str) -> bool:
    return s.replace("_", "").isalnum()


def _ends_with_barrier(fe: ast.ForEach) -> bool:
    """Whether every unit of ``fe`` ends with a barrier (then its successor needs none)."""
    body = fe.body
    stmts = body.statements if isinstance(body, ast.Block) else (body,)
    if not stmts:
        return False
    last = stmts[-1]
    return isinstance(last, ast.Barrier) or isinstance(last, ast.ForEach) and \
        _ends_with_barrier(last)


def _top_level(text: str) -> tuple[str, set[str]]:
    """``text`` without parentheses around all of it, and the operators outside any
    parentheses in it."""
    while text.startswith("(") and text.endswith(")"):
        depth = 0
        for i, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and i < len(text) - 1:
                break
        else:
            text = text[1:-1].strip()
            continue
        break
    ops, depth = set(), 0
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and ch in "+-*/%<>?&|^":
            ops.add(ch)
    return text, ops


def _product(factors: Sequence[str]) -> str:
    """The product of plan expressions, folded, with the parentheses C needs."""
    parts = [f for f in factors if f != "1"]
    if not parts:
        return "1"
    out = []
    for i, f in enumerate(parts):
        f, ops = _top_level(f)
        allowed = {"*", "/", "%"} if i == 0 else {"*"}
        out.append(f if ops <= allowed else f"({f})")
    return _fold(" * ".join(out))


def _fold(text: str) -> str:
    """A purely numeric expression as its value (C semantics); others unchanged."""
    try:
        return str(evaluate(text, {}))
    except (McplError, RecursionError):
        return text


def _library_or_none(f: ast.Function | None) -> bool:
    """Whether a function of lib.atomics' name is the library's (or not defined at
    all): then the call is the hardware's atomic operation, not the body, which says
    what it does as if no other unit ran. A kernel's own function of that name is
    called as written."""
    from mcl.mcpl.resolve import STDLIB
    return f is None or Path(f.span.file).resolve().parent == STDLIB.resolve()


def _float_atomic_helper(qualifier: str) -> str:
    space = qualifier.strip("_")
    # the bits compared, not the floats: a NaN never equals itself (the loop would not
    # end) and -0.0 equals 0.0 (an update would be lost)
    return (f"// atomicAdd on a float in {space} memory: compare-and-swap on its bits\n"
            f"inline void mcl_atomic_add_float_{space}(volatile {qualifier} float *p, float v)\n"
            "{\n"
            f"    volatile {qualifier} unsigned int *bits = (volatile {qualifier} "
            "unsigned int *)p;\n"
            "    unsigned int old = *bits;\n"
            "    unsigned int seen;\n"
            "    while ((seen = atomic_cmpxchg(bits, old, as_uint(as_float(old) + v))) "
            "!= old) {\n"
            "        old = seen;\n"
            "    }\n"
            "}")


def _registers_per_work_item(hardware, work_group_size: int) -> int | None:
    """32-bit registers a work-item may use so that its work-group fits in the register
    files of one holder of work-groups (an SM: the files of all its partitions) of the
    description (None when it has no register memory)."""
    if hardware is None:
        return None
    from mcl.analyses.resources import max_registers
    return max_registers(hardware, work_group_size)

def _constant_size(expr: str) -> int | None:
    """The value of a launch-size expression that names no parameter, else None."""
    try:
        return int(evaluate(expr, {}))
    except (McplError, ValueError, TypeError, ZeroDivisionError):
        return None


def _conditional(name: str, args: list[str]) -> str:
    """``min``, ``max`` or ``abs`` of integer operands as a conditional expression."""
    if name == "abs":
        (a,) = args
        return f"(({a}) < 0 ? -({a}) : ({a}))"
    out = args[0]
    for b in args[1:]:
        out = f"(({out}) {'<' if name == 'min' else '>'} ({b}) ? ({out}) : ({b}))"
    return out


class _CPrinter:
    """Prints MCPL expressions as OpenCL C; ``plan``: sizes in the parameters only (no
    flattening, no marking of reads); ``constant``: an integer constant expression, as
    the size of an array must be (``min``, ``max`` and ``abs`` of integers as
    conditional expressions, which C allows there, where OpenCL's built-in functions
    are calls)."""

    def __init__(self, gen: _KernelGen, plan: bool = False, constant: bool = False):
        self.gen = gen
        self.plan = plan
        self.constant = constant

    def expr(self, e: ast.Expr) -> str:
        return self.p(e)[0]

    def p(self, e: ast.Expr) -> tuple[str, int]:
        g = self.gen
        if isinstance(e, _Paren):
            return self.p(e.inner)
        if isinstance(e, ast.Literal):
            return self.literal(e), _ATOM
        if isinstance(e, ast.Name):
            if self.plan:
                return e.id, _ATOM
            v = g.lookup(e.id, e)
            v.root.read = True
            if v.by_pointer:
                return f"{v.cname}[0]", _ATOM
            return v.cname, _ATOM
        if isinstance(e, ast.HwdRef):
            return self.literal(g.hwd_literal(e)), _ATOM
        if isinstance(e, ast.Index):
            return self.index(e), _ATOM
        if isinstance(e, ast.Field):
            return f"{self.operand(e.base, _ATOM)}.{e.name}", _ATOM
        if isinstance(e, ast.Unary):
            return f"{e.op}{self.operand(e.operand, _UNARY_PREC)}", _UNARY_PREC
        if isinstance(e, ast.Binary):
            prec = _PREC[e.op]
            left = self.operand(e.left, prec)
            right = self.operand(e.right, prec + 1)
            return f"{left} {e.op} {right}", prec
        if isinstance(e, ast.Ternary):
            return (f"{self.operand(e.cond, 1)} ? {self.operand(e.then, 1)} : "
                    f"{self.operand(e.orelse, 1)}"), 0
        if isinstance(e, ast.Cast):
            return f"({_ctype(e.type.name, g)}){self.operand(e.operand, _UNARY_PREC)}", \
                _UNARY_PREC
        if isinstance(e, ast.Call):
            return self.call(e), _ATOM
        raise _err("opencl-unsupported", f"cannot generate {type(e).__name__}", e)

    def operand(self, e: ast.Expr, prec: int) -> str:
        text, p = self.p(e)
        return text if p >= prec else f"({text})"

    def literal(self, e: ast.Literal) -> str:
        if e.kind == "bool":
            return "true" if e.value else "false"
        if e.kind == "float":
            text = repr(float(e.value))
            return text if self.gen.uses_double or self.plan else text + "f"
        return str(e.value)

    def assign(self, s: ast.Assign) -> str:
        self.gen.mark_written(s.target)
        root = root_name(s.target)
        var = self.gen.lookup(root.id, root).root if root is not None else None
        target = _store_target(var, s.op, lambda: self.expr(s.target))
        return f"{target} {s.op} {self.expr(s.value)}"

    # ---- arrays

    def index(self, e: ast.Index) -> str:
        base = e.base
        if not isinstance(base, ast.Name):
            raise _err("opencl-unsupported", "indexing something other than a variable", e)
        v = self.gen.lookup(base.id, base)
        if not v.type.is_array:
            raise _err("opencl-not-array", f"'{base.id}' is not an array", e)
        if [len(g) for g in e.groups] != [len(level) for level in v.type.dims]:
            raise _err("opencl-index-count", f"'{base.id}' is indexed as "
                       + "".join(f"[{len(g) * ','}]" for g in e.groups) + " but has shape "
                       + "".join(f"[{len(level)}]" for level in v.type.dims), e)
        v.root.read = True
        groups = [[self.p(i) for i in grp] for grp in e.groups]
        checked = self.checked_positions(e)
        if checked:
            groups = self.checked_indices(e, groups, v.type.dims, checked)
        wide = _wide(v.root)
        if v.base is not None and v.tiled:
            rank = len(v.base.type.dims[0])
            per_dim = []
            for k in range(rank):
                parts = [grp[k] for grp in groups]
                sizes = [level[k] for level in v.type.dims]
                per_dim.append(self.horner_text(parts, sizes))
            offset = self.horner_text(per_dim, v.base.type.sizes, wide)
        else:
            offset = self.horner_text([i for grp in groups for i in grp], v.type.sizes, wide)
        return f"{v.root.cname}[{offset[0]}]"

    def checked_positions(self, e: ast.Index) -> frozenset[int] | tuple[int, ...]:
        """The positions of the indices of ``e`` checked as the kernel runs
        (mcl.opencl.index_checks): those the data choose, and in a helper function of
        a kernel that checks them every one; none in a plan's expressions."""
        g = self.gen
        if self.plan or g.index_checks is None:
            return ()
        if g.check_every_index:
            return frozenset(range(sum(len(grp) for grp in e.groups)))
        if e.span is None:
            return ()
        return g.index_checks.get((e.span.line, e.span.column, e.base.id), ())

    def checked_indices(self, e: ast.Index, groups: list[list[tuple[str, int]]],
                        dims: Sequence[Sequence[ast.Expr]], positions
                        ) -> list[list[tuple[str, int]]]:
        """The printed indices of ``e``, those at ``positions`` checked against their
        dimension as the kernel runs (mcl.opencl.index_checks)."""
        from mcl.mcpl.printer import print_expr
        g = self.gen
        g.checks_indices = True
        count = sum(len(grp) for grp in groups)
        out, position = [], 0
        for grp, exprs, level in zip(groups, e.groups, dims, strict=True):
            checked = []
            for (text, prec), x, size in zip(grp, exprs, level, strict=True):
                if position in positions:
                    g.index_sites.append(IndexSite(print_expr(e), e.base.id, position, count,
                                                   e.span, g.check_every_index))
                    wide = "long" in (self.type_of(x), self.type_of(size))
                    text, prec = check_call(text, self.expr(size), len(g.index_sites), wide,
                                            g.check_every_index), _ATOM
                checked.append((text, prec))
                position += 1
            out.append(checked)
        return out

    def horner(self, idx: Sequence[ast.Expr], sizes: Sequence[ast.Expr],
               wide: bool = False) -> tuple[str, int]:
        return self.horner_text([self.p(i) for i in idx], sizes, wide)

    def horner_text(self, parts: list[tuple[str, int]], sizes: Sequence[ast.Expr],
                    wide: bool = False) -> tuple[str, int]:
        """Row-major offset ``((i0 * s1 + i1) * s2 + i2)...`` from printed indices.
        ``wide``: an array in device memory, which may hold 2^31 elements or more: the
        first index is cast to ``MCL_OFFSET`` (:data:`OFFSET_MACRO`), so that the
        offset is computed in 64 bits where the program is built so."""
        acc = parts[0]
        if wide and len(parts) > 1:
            text = acc[0] if acc[1] >= _UNARY_PREC else f"({acc[0]})"
            acc = (f"({OFFSET_MACRO}){text}", _UNARY_PREC)
        for part, size in zip(parts[1:], sizes[1:], strict=True):
            s_text, s_prec = self.p(size)
            left = acc[0] if acc[1] >= 10 else f"({acc[0]})"
            right = s_text if s_prec > 10 else f"({s_text})"
            i_text = part[0] if part[1] >= 9 else f"({part[0]})"
            acc = (f"{left} * {right} + {i_text}", 9)
        return acc

    # ---- calls

    def call(self, e: ast.Call) -> str:
        g = self.gen
        name = e.func
        if name == "atomicAdd" or name in ATOMICS and _library_or_none(g.find_function(name)):
            return self.atomic(e)
        if name not in _FLOAT_MATH and name not in ("min", "max", "abs"):
            return self.helper_call(e)
        args = [self.expr(a) for a in e.args]
        if name in _FLOAT_MATH:
            types = [self.type_of(a) for a in e.args]
            args = [a if t in ("float", "double") else f"(float){self.operand(x, _UNARY_PREC)}"
                    for a, t, x in zip(args, types, e.args, strict=True)]
            return f"{name}({', '.join(args)})"
        if name in ("min", "max", "abs"):
            types = [self.type_of(a) for a in e.args]
            if self.constant and not any(t in ("float", "double") for t in types):
                return _conditional(name, args)
            if any(t in ("float", "double") for t in types):
                want = "double" if "double" in types else "float"
                args = [a if t in ("float", "double") else f"({want}){self.operand(x, 11)}"
                        for a, t, x in zip(args, types, e.args, strict=True)]
                name = {"min": "fmin", "max": "fmax", "abs": "fabs"}[name]
        return f"{name}({', '.join(args)})"

    def helper_call(self, e: ast.Call) -> str:
        g = self.gen
        fn = g.find_function(e.func)
        if fn is None:
            raise _err("opencl-unknown-function", f"unknown function '{e.func}'", e)
        if len(fn.params) != len(e.args):
            raise _err("opencl-helper-argument", f"'{e.func}' takes {len(fn.params)} arguments, "
                       f"not {len(e.args)}", e)
        if is_builtin_stub(fn):
            return self.stub_call(e, fn)
        spaces: list[str | None] = []
        for p, a in zip(fn.params, e.args, strict=True):
            root = root_name(a)
            var = g.lookup(root.id, root) if root is not None else None
            if p.const and not p.type.is_array:
                spaces.append(None)     # passed by value
            elif p.type.is_array:
                if not isinstance(a, ast.Name) or var is None or not var.type.is_array:
                    raise _err("opencl-helper-argument", f"'{e.func}' takes an array as "
                               f"'{p.name}': pass a whole array variable", a)
                if var.base is not None and var.tiled:
                    raise _err("opencl-helper-argument", f"'{root.id}' is a tiled view, whose "
                               f"elements are not in the order '{e.func}' indexes them", a,
                               "pass the array it views")
                spaces.append(var.root.qualifier)
            elif var is not None and var.kind in ("local", "param") and (
                    isinstance(a, ast.Name) or var.type.is_array):
                spaces.append(var.root.qualifier if var.type.is_array or var.by_pointer
                              else "__private")
            else:
                spaces.append(None)
        h = g.helper(e.func, e, tuple(spaces))
        args = []
        for i, (p, a) in enumerate(zip(fn.params, e.args, strict=True)):
            if p.type.is_array:
                v = g.lookup(a.id, a).root
                v.read |= i in h.read
                v.written |= i in h.written
                args.append(v.cname)
            elif i in h.by_pointer:
                root = root_name(a)
                v = g.lookup(root.id, root).root
                args.append(_store_target(v, "=", lambda a=a: f"&{self.operand(a, _UNARY_PREC)}"))
                v.read |= i in h.read
                v.written = True
            else:
                args.append(self.expr(a))
        if h.checks_indices:        # it checks indices: it keeps a fault in the caller's
            g.checks_indices = True
            args.append(passed_privates(g.check_every_index))
        return f"{h.cname}({', '.join(args)})"

    def stub_call(self, e: ast.Call, fn: ast.Function) -> str:
        """A call of a library stub: the OpenCL built-in of the same name; written
        scalars are passed by pointer, as OpenCL's fract, modf, sincos, ... take them."""
        g = self.gen
        written = stub_writes(fn)
        args = []
        for p, a in zip(fn.params, e.args, strict=True):
            root = root_name(a)
            if p.name in written and not p.type.is_array:
                if root is None:
                    raise _err("opencl-helper-argument", f"'{e.func}' writes '{p.name}': pass "
                               "a variable or an array element", a)
                v = g.lookup(root.id, root).root
                # written through the pointer, not read
                args.append(_store_target(v, "=", lambda a=a: f"&{self.operand(a, _UNARY_PREC)}"))
                v.written = True
            else:
                args.append(self.expr(a))
                if p.name in written and root is not None:
                    g.lookup(root.id, root).root.written = True
        return f"{e.func}({', '.join(args)})"

    def atomic(self, e: ast.Call) -> str:
        g = self.gen
        target = e.args[0]
        root = root_name(target)
        if root is None:
            raise _err("opencl-bad-atomic", f"the first argument of '{e.func}' must be a "
                       "variable or an array element", e)
        v = g.lookup(root.id, root).root
        v.written = True
        if v.qualifier not in ("__global", "__local"):
            raise _err("opencl-bad-atomic", f"'{e.func}' on '{root.id}', which is private to "
                       "one unit: atomics need global or local memory", e,
                       "use a plain update on private variables")
        ptr = f"&{self.operand(target, _UNARY_PREC)}"
        rest = [self.expr(a) for a in e.args[1:]]
        elem = self.type_of(target)
        if elem in ("float", "double"):
            if e.func != "atomicAdd" or elem == "double":
                raise _err("opencl-bad-atomic", f"'{e.func}' on a '{elem}' is not available in "
                           "OpenCL", e, "use an int variable or atomicAdd on float")
            if g.target.float_atomic_add == "native":
                return f"atomic_add({ptr}, {rest[0]})"
            g.float_atomics.add(v.qualifier)
            return f"mcl_atomic_add_float_{v.qualifier.strip('_')}({ptr}, {rest[0]})"
        return f"{ATOMICS[e.func]}({', '.join([ptr, *rest])})"

    def type_of(self, e: ast.Expr) -> str:
        g = self.gen
        if isinstance(e, _Paren):
            return self.type_of(e.inner)
        if isinstance(e, ast.Literal):
            return {"int": "int", "float": "float", "bool": "bool"}[e.kind]
        if isinstance(e, ast.Name | ast.Index):
            root = e if isinstance(e, ast.Name) else e.base
            if isinstance(root, ast.Name):
                return g.lookup(root.id, root).type.name
            return "float"
        if isinstance(e, ast.Field):
            base = self.type_of(e.base)
            td = g.records.get(base) or g.find_type(base)
            if td is not None:
                for fld in td.fields:
                    if fld.name == e.name:
                        return fld.type.name
            return "float"
        if isinstance(e, ast.Cast):
            return e.type.name
        if isinstance(e, ast.Unary):
            return "bool" if e.op == "!" else self.type_of(e.operand)
        if isinstance(e, ast.Binary):
            if _PREC[e.op] <= 7 and e.op not in ("|", "^", "&"):
                return "bool"
            return max(self.type_of(e.left), self.type_of(e.right),
                       key=lambda t: _RANK.get(t, _RANK["float"]))
        if isinstance(e, ast.Ternary):
            return max(self.type_of(e.then), self.type_of(e.orelse),
                       key=lambda t: _RANK.get(t, _RANK["float"]))
        if isinstance(e, ast.HwdRef):
            return "int" if isinstance(g.hwd_literal(e).value, int) else "float"
        if isinstance(e, ast.Call):
            if e.func in ("min", "max", "abs"):
                return max((self.type_of(a) for a in e.args),
                           key=lambda t: _RANK.get(t, _RANK["float"]))
            if e.func in _FLOAT_MATH:
                return "double" if any(self.type_of(a) == "double" for a in e.args) else "float"
            if e.func in ATOMICS:
                return self.type_of(e.args[0])
            f = g.find_function(e.func)
            return f.return_type.name if f is not None else "float"
        return "float"
