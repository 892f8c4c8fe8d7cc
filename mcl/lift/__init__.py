"""Lift: programs as compositions of functional patterns, rewrite rules that
derive hardware-specific implementations, a search over them, and OpenCL
generation (seeds 001 and 002).

Public API (for tools such as the MCPL -> Lift bridge):

Types (``mcl.lift.types``)
    ``ScalarType``, ``VectorType``, ``TupleType``, ``ArrayType(elem, size)`` with
    sympy sizes; ``FLOAT``, ``INT``; ``array(elem, *sizes)``; ``size_symbol(name)``.

IR and Python API (``mcl.lift.ir``)
    Data: ``Param(name, type=...)``, ``Literal(text, type)``, ``Call(fun, args)``.
    Functions: ``Prim(name, args, dim)`` (patterns, see ``PATTERNS``),
    ``UserFun(name, params, ret, body)`` (body: ``mcl.lift.cexpr`` C expression),
    ``Lambda(params, body)``, ``Compose(funs)``.
    Builders: ``mk(name, *params, dim=0)``, ``map_(f)``, ``reduce_(f, init)``,
    ``split(n)``, ``JOIN``, ``TRANSPOSE``, ``ID``, ``zip_(*xs)``, ``get(x, i)``,
    ``apply(f, *args)`` (``f $ x``), ``compose(f, g)`` (``f o g``), ``fun(...)``,
    ``lit(text)``; ``Program(name, body: Lambda, userfuns)``;
    ``bind_sizes(node_or_program, {name: int})``; traversal ``walk``, ``at``,
    ``replace_at``, ``substitute``, ``is_lowered``.

Text (``mcl.lift.parser`` / ``mcl.lift.printer``)
    ``parse(text, file) -> Program``, ``parse_file(path)``, ``parse_expr(text, env)``;
    ``show(node)``, ``show_program(program)``, ``key(node)`` (memoisation key).

Types and semantics
    ``mcl.lift.typecheck.check_program(program) -> Type`` (raises ``LiftTypeError``,
    an ``McplError`` with code ``lift-type``), ``type_of(expr, env)``,
    ``fun_type(f, arg_types)``; ``mcl.lift.interp.run(program, *numpy_inputs)``,
    ``random_inputs(program, sizes)``.

Rules (``mcl.lift.rules``; macros: ``.macros``, ``.macros_mm``, ``.stencil_blocking``)
    ``RULES[name] -> Rule(name, kind, doc, match, rhs, condition, exact)``;
    ``rewrites(program, rules=None, limits=None) -> [Rewrite(rule, path, choice,
    result)]``; ``apply_rule(program, name, path=None, choice=0)``; ``Limits``.

Code generation (``mcl.lift.codegen``, ``.codegen_patterns``, ``mcl.lift.execute``)
    ``generate(program, sizes, Options()) -> Generated(source, kernels, buffers,
    inputs, output, output_shape)`` with ``.plan()``; ``run_generated(gen, runtime,
    inputs)``; ``Bound(compile_generated(gen, rt), inputs).time()``. An input must have
    the shape its type declares (the plan's buffer says ``shape``; a scalar is a number):
    its elements in another shape are refused (``McplError``, ``lift-run``), as is a
    conversion that would change its values. A small input read
    through ``toConstant`` is a kernel argument passed by value, a struct of its
    elements (the plan's buffer says ``by_value``; ``Bound`` packs it).

Exploration (``mcl.lift.explore``)
    ``explore(program, sizes, strategy='mcts'|'random'|'exhaustive', budget, device,
    results_path, ...) -> Results`` (``.best()``, ``.curve``, ``.evaluations``); Ctrl-C
    raises ``ExploreInterrupted`` (a ``KeyboardInterrupt``) whose ``results`` are the
    candidates evaluated so far, saved to ``results_path``. The names of ``sizes`` are
    checked against the program's before anything is evaluated.

Arguments of the wrong kind (a number or a text where a Program or a path is taken, a
size map that is not a dict of names) raise ``mcl.lift.arguments.LiftArgumentError``,
an ``McplError`` (code ``lift-argument``) and a ``TypeError`` naming the function and
the argument; sizes that are not positive integers, or names a program does not use,
an ``McplError`` with code ``lift-size``.
"""

import mcl.sympy_integers  # noqa: F401 (sympy's floor of an even size by 6, corrected)
from mcl.lift.ir import Program
from mcl.lift.parser import parse, parse_file
from mcl.lift.printer import show, show_program

__all__ = ["Program", "parse", "parse_file", "show", "show_program"]
