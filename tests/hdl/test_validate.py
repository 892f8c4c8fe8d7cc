"""Each validation rule with a failing example: a minimal valid description, mutated."""

from __future__ import annotations

import pytest

from mcl.hdl.library import BUNDLED
from tests.hdl.conftest import codes

LIB_GPU = BUNDLED / "gpu.hdl"

VALID = """\
hardware_description user;
specializes perfect;

parallelism hierarchy {
  memory_space main { default; }
  par_group blocks {
    max_nr_units = 64;
    par_unit block {
      memory_space near { }
      par_group threads {
        max_nr_units = 128;
        par_unit thread {
          memory_space reg { default; }
        }
      }
    }
  }
}

device user {
  mem;
  link;
  cores;
}

memory mem {
  space(main);
  capacity = 2 GB;
}

interconnect link {
  connects(mem, cores.core[*]);
  latency = 300 cycles;
  bandwidth = 100 GB/s;
}

execution_group cores {
  nr_units = 8;
  clock_frequency = 1 GHz;
  execution_unit core {
    slots(block, 2);
    scratch;
    regs;
    simd_group lanes {
      nr_units = 32;
      simd_unit lane {
        slots(thread, 1);
        perfect.ops;
      }
    }
  }
}

cache scratch {
  space(near);
  capacity = 32 kB;
  cache_line_size = 64 B;
}

memory regs {
  space(reg);
  addressable = false;
  capacity = 64 kB;
}
"""


def mutate(old: str, new: str) -> str:
    assert old in VALID, old
    return VALID.replace(old, new, 1)


def test_the_base_example_is_valid(check):
    hwd, diags = check(VALID)
    assert diags == []
    assert hwd.peak_flops() == 8 * 32 * 1e9
    assert hwd.is_faster("near", "main")
    assert [g.name for g in hwd.lockstep_par_groups()] == ["threads"]


CASES = [
    # (code, old text, new text, a piece of the source line the diagnostic points at)
    # a missing ';' is reported after the statement, not at the next line's '}'
    ("hdl-syntax", "capacity = 2 GB;", "capacity = 2 GB", "capacity = 2 GB"),
    ("hdl-syntax", "par_unit thread {", "par_unit thread", "memory_space reg"),
    ("hdl-unknown-keyword", "memory mem {", "memroy mem {", "memroy"),
    ("hdl-unknown-property", "capacity = 2 GB;", "capasity = 2 GB;", "capasity"),
    ("hdl-unknown-unit", "capacity = 2 GB;", "capacity = 2 Gb;", "Gb"),
    ("hdl-wrong-unit", "capacity = 2 GB;", "capacity = 2 GHz;", "GHz"),
    ("hdl-missing-unit", "capacity = 2 GB;", "capacity = 2;", "capacity = 2;"),
    ("hdl-bad-value", "nr_units = 8;", "nr_units = true;", "true"),
    ("hdl-bad-value", "nr_units = 8;", "nr_units = 2.5;", "2.5"),
    ("hdl-bad-value", "nr_units = 8;", "nr_units = 8 / 0;", "8 / 0"),
    ("hdl-bad-value", "nr_units = 8;", "nr_units = cores;", "cores"),
    # sizes, rates, frequencies and counts are greater than 0
    ("hdl-bad-value", "capacity = 2 GB;", "capacity = -4 GB;", "-4 GB"),
    ("hdl-bad-value", "capacity = 2 GB;", "capacity = 2 - 3 GB;", "2 - 3 GB"),
    ("hdl-bad-value", "bandwidth = 100 GB/s;", "bandwidth = 0 GB/s;", "0 GB/s"),
    ("hdl-bad-value", "clock_frequency = 1 GHz;", "clock_frequency = -1 GHz;", "-1 GHz"),
    ("hdl-bad-value", "max_nr_units = 64;", "max_nr_units = 0;", "max_nr_units = 0"),
    ("hdl-bad-value", "nr_units = 8;", "nr_units = -8;", "nr_units = -8"),
    ("hdl-bad-value", "cache_line_size = 64 B;", "cache_line_size = 0 B;", "0 B"),
    ("hdl-bad-value", "latency = 300 cycles;", "latency = -3 cycles;", "-3 cycles"),
    ("hdl-bad-value", "slots(block, 2);", "slots(block, -2);", "slots(block, -2)"),
    ("hdl-unknown-statement", "space(main);", "spaces(main);", "spaces"),
    ("hdl-bad-arguments", "slots(block, 2);", "slots(block);", "slots(block)"),
    ("hdl-bad-arguments", "space(main);", "space(main, reg);", "space(main, reg)"),
    ("hdl-property-not-allowed", "space(main);", "space(main);\n  nr_units = 2;", "nr_units"),
    ("hdl-property-not-allowed", "par_unit thread {", "par_unit thread {\n latency = 1 cycle;",
     "latency"),
    ("hdl-property-not-allowed", "slots(block, 2);", "slots(block, 2);\n default;", "default"),
    ("hdl-property-not-allowed", "space(main);", "space(main);\n slots(thread, 1);", "slots"),
    ("hdl-duplicate-property", "capacity = 2 GB;", "capacity = 2 GB; capacity = 1 GB;",
     "capacity"),
    ("hdl-missing-property", "    max_nr_units = 64;\n", "", "par_group blocks"),
    ("hdl-conflicting-property", "max_nr_units = 64;", "max_nr_units = 64; nr_units = 4;",
     "max_nr_units = 64"),
    ("hdl-missing-property", "  space(main);\n  capacity = 2 GB;", "  capacity = 2 GB;",
     "memory mem"),
    ("hdl-missing-property", "  connects(mem, cores.core[*]);\n", "", "interconnect link"),
    ("hdl-missing-property", "    slots(block, 2);\n", "", "execution_group cores"),
    ("hdl-missing-property", "        slots(thread, 1);\n", "", "simd_group lanes"),
    ("hdl-unknown-space", "space(near);", "space(nearby);", "nearby"),
    ("hdl-unknown-par-unit", "slots(block, 2);", "slots(blocks, 2);", "blocks"),
    ("hdl-unresolved-endpoint", "connects(mem, cores.core[*]);", "connects(mem, cpus.core[*]);",
     "cpus"),
    ("hdl-bad-endpoint", "connects(mem, cores.core[*]);", "connects(mem[*], cores.core[*]);",
     "mem[*]"),
    ("hdl-unresolved-reference", "  scratch;\n", "  scratchpad;\n", "scratchpad"),
    ("hdl-unresolved-reference", "perfect.ops;", "perfect.opps;", "perfect.opps"),
    ("hdl-unresolved-reference", "perfect.ops;", "perfect.cores.nothing;", "nothing"),
    ("hdl-unresolved-reference", "perfect.ops;", "unlimited;", "unlimited"),
    ("hdl-bad-nesting", "    regs;\n    simd_group", "    regs;\n    link;\n    simd_group",
     "link;"),
    ("hdl-bad-nesting", "memory_space near { }", "memory_space near { }\n mem;", "mem;"),
    ("hdl-bad-nesting", "perfect.ops;", "perfect.hierarchy.threads;", "perfect.hierarchy"),
    ("hdl-missing-block", "        par_unit thread {\n          memory_space reg { default; }\n"
     "        }\n", "", "par_group threads"),
    ("hdl-too-many", "  par_group blocks {", "  par_group other { nr_units = 2; par_unit o {} }\n"
     "  par_group blocks {", "par_group blocks"),
    ("hdl-duplicate-block", "  link;\n", "  link;\n  link;\n", None),
    ("hdl-duplicate-block", "cache scratch {", "memory mem { space(main); }\ncache scratch {",
     "mem"),
    ("hdl-duplicate-name", "memory_space near { }", "memory_space main { }", "main"),
    ("hdl-two-defaults", "memory_space near { }", "memory_space near { }\n memory_space near2 "
     "{ default; } memory_space near3 { default; }", "near3"),
    ("hdl-missing-device", "device user {", "device usr { }\ndevice other {",
     "hardware_description"),
    ("hdl-missing-parallelism", "parallelism hierarchy {", "device_group hierarchy {",
     "hardware_description"),
    ("hdl-missing-parent", "specializes perfect;", "specializes perfekt;", "perfekt"),
    ("hdl-specializes-cycle", "specializes perfect;", "specializes user;", "specializes"),
    ("hdl-reference-cycle", "    regs;\n", "    regs;\n    cores;\n", None),
    ("hdl-child-hierarchy", "max_nr_units = 128;", "max_nr_units = unlimited;", None),
    ("hdl-child-memory-space", "          memory_space reg { default; }\n", "", "specializes"),
    ("hdl-child-memory-space", "  memory_space main { default; }\n",
     "  memory_space main { default; read_only; }\n", "specializes"),
]


@pytest.mark.parametrize("code,old,new,line", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule(check, code, old, new, line):
    text = mutate(old, new)
    _, diags = check(text)
    assert code in codes(diags), [f"{d.code}: {d.message}" for d in diags]
    d = next(d for d in diags if d.code == code)
    assert d.span is not None and d.span.file.endswith("user.hdl")
    assert d.span.line >= 1 and d.span.column >= 1
    if line is not None:
        source = text.splitlines()[d.span.line - 1]
        assert line in source, (d, source)
    assert d.hint, "every diagnostic says what to change"


def test_cache_without_line_size_is_a_warning(check):
    _, diags = check(mutate("  cache_line_size = 64 B;\n", ""))
    assert codes(diags) == []
    assert [d.message for d in diags if d.code == "hdl-missing-property"] == [
        "cache 'scratch' has no cache_line_size"]


def test_unused_block_is_a_warning(check):
    _, diags = check(VALID + "\nmemory spare { space(main); capacity = 1 kB; }\n")
    assert codes(diags) == []
    assert "hdl-unused-block" in [d.code for d in diags]


def test_no_parent_is_a_warning(check):
    _, diags = check(mutate("specializes perfect;\n", ""))
    assert codes(diags) == []
    assert "hdl-no-parent" in [d.code for d in diags]


def test_specializes_cycle_between_two_files(tmp_path):
    from mcl.hdl import HardwareLibrary

    (tmp_path / "a.hdl").write_text(mutate("hardware_description user;",
                                           "hardware_description a;")
                                    .replace("specializes perfect;", "specializes b;")
                                    .replace("device user {", "device a {"))
    (tmp_path / "b.hdl").write_text(mutate("hardware_description user;",
                                           "hardware_description b;")
                                    .replace("specializes perfect;", "specializes a;")
                                    .replace("device user {", "device b {"))
    lib = HardwareLibrary([tmp_path])
    assert "hdl-specializes-cycle" in codes(lib.diagnostics("a"))
    assert "a" in lib.names() and "b" in lib.names()


def test_replacing_perfect_is_refused(tmp_path):
    from mcl.hdl import HardwareLibrary

    (tmp_path / "perfect.hdl").write_text(
        mutate("hardware_description user;", "hardware_description perfect;")
        .replace("specializes perfect;\n", "").replace("device user {", "device perfect {"))
    lib = HardwareLibrary([tmp_path])
    assert "hdl-replaces-perfect" in codes(lib.diagnostics("perfect"))
    assert lib.file("perfect").endswith("mcl/hwdescs/perfect.hdl")


def test_file_name_must_match(tmp_path):
    from mcl.hdl import HardwareLibrary

    (tmp_path / "other.hdl").write_text(VALID)
    lib = HardwareLibrary([tmp_path])
    assert "hdl-file-name" in codes(lib.diagnostics("user"))


def test_units_are_normalised(check):
    hwd, diags = check(mutate("capacity = 2 GB;", "capacity = 32768 * 32 bit;")
                       .replace("bandwidth = 100 GB/s;", "bandwidth = 8 Gbit/s;")
                       .replace("capacity = 32 kB;", "capacity = 128B;"))
    assert diags == []
    assert hwd.memories_holding("main")[0].capacity == 32768 * 4
    assert hwd.memory_bandwidth("main") == 1e9
    assert hwd.memories_holding("near")[0].capacity == 128
    assert hwd.clock_frequency() == 1e9
    assert hwd.memory_latency("main") == 300


def test_legacy_consistency_and_symbolic_values(check):
    hwd, diags = check(mutate("memory_space near { }",
                              "memory_space near { consistency = barrier; }")
                       .replace("memory_space main { default; }",
                                "memory_space main { default; consistency = full; }")
                       .replace("capacity = 2 GB;", "capacity = countable;"))
    assert diags == []
    assert hwd.memory_space("near").consistency == "barrier"
    assert hwd.memory_space("main").consistency == "full"
    assert str(hwd.memories_holding("main")[0].capacity) == "countable"
    _, diags = check(mutate("memory_space near { }", "memory_space near { consistency = 3; }"))
    assert "hdl-bad-value" in codes(diags)


@pytest.mark.parametrize("old,new", [
    ("capacity = 2 GB;", "capacity = -4 GB;"),
    ("latency = 300 cycles;", "latency = -3 cycles;"),
    ("max_nr_units = 64;", "max_nr_units = -64;"),
    ("nr_units = 8;", "nr_units = 0;"),
    ("slots(block, 2);", "slots(block, -2);"),
])
def test_a_value_out_of_range_is_one_error_at_the_value(check, old, new):
    text = mutate(old, new)
    _, diags = check(text)
    # one error, not also 'needs nr_units' or 'has no slots' for the rejected statement
    assert codes(diags) == ["hdl-bad-value"], [f"{d.code}: {d.message}" for d in diags]
    d = diags[0]
    line = text.splitlines()[d.span.line - 1]
    assert line[d.span.column - 1:].startswith("-" if "-" in new else "0"), (d, line)


def test_zero_latency_and_reserved_are_allowed(check):
    _, diags = check(mutate("latency = 300 cycles;", "latency = 0 cycles;"))
    assert codes(diags) == []


def test_missing_semicolon_is_reported_after_the_previous_token(check):
    # the line after the missing ';' starts with a name, which the parser takes as the
    # unit of 1024: it notices only at the '.' of the next line
    lines = open(LIB_GPU).read().splitlines(keepends=True)
    number = next(i for i, ln in enumerate(lines) if "max_nr_units = 1024;" in ln)
    lines[number] = lines[number].replace("1024;", "1024")
    _, diags = check("".join(lines), "gpu")
    assert [(d.code, d.message) for d in diags] == [
        ("hdl-syntax", "syntax error: expected ';' after '1024'")]
    d = diags[0]
    assert (d.span.line, d.span.column) == (number + 1, lines[number].index("1024") + 5)


def test_a_syntax_error_within_a_line_stays_where_it_is_found(check):
    _, diags = check(mutate("capacity = 2 GB;", "capacity = 2 GB GB;"))
    assert [d.code for d in diags] == ["hdl-syntax"]
    assert "found 'GB', expected ';'" in diags[0].message
    assert diags[0].span.column == len("  capacity = 2 GB ") + 1
