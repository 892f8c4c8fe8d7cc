"""mcl.opencl.sass reads the bytes a warp keeps in flight from SASS as
cuobjdump prints it: the hot loop's loads, the latencies a warp waits for them (a load
waited for once its register is read or overwritten), and of an if-else the path with
the wider loads. SASS made here by hand in cuobjdump's format, so that the figures the
calibration quotes (benchmarks/results/perf/h200_2026-11-30/row_pieces_unroll/) rest on
a reading that is checked without the GPU."""

from __future__ import annotations

from mcl.opencl.sass import loads_together, rounds


def _sass(*lines: str) -> str:
    """cuobjdump's lines for ``lines``, at addresses 0x0100, 0x0110, ..."""
    return "\n".join(f"        /*{0x100 + 16 * i:04x}*/                   {line} ;"
                     f"   /* 0x000000000000000000 */" for i, line in enumerate(lines))


def _loop(*body: str) -> str:
    """``body`` as a loop: a branch back to its first instruction, then the exit."""
    return _sass(*body, "@!P0 BRA 0x100", "EXIT")


def test_loads_issued_before_their_first_use_are_one_round():
    sass = _loop(*[f"LDG.E.CONSTANT R{4 + i}, desc[UR6][R2.64+0x{i}00]" for i in range(4)],
                 *[f"FADD R20, R20, R{4 + i}" for i in range(4)], "IADD3 R2, R2, 0x400, RZ")
    r = rounds(sass)
    assert (r.loads, r.rounds, r.bytes_a_round) == (4, 1, 512)
    assert loads_together(sass) == (4, 1)


def test_a_register_reused_for_the_next_load_makes_a_round_of_each():
    # ptxas at few registers: each load goes to R8 after the add has used the last one
    body = []
    for i in range(4):
        body += [f"LDG.E.CONSTANT R8, desc[UR6][R2.64+0x{i}00]", "FADD R20, R20, R8"]
    r = rounds(_loop(*body))
    assert (r.loads, r.rounds, r.bytes_a_round) == (4, 4, 128)
    # the most loads between branches says 4, whatever the waits
    assert loads_together(_loop(*[x for x in body if x.startswith("LDG")]))[0] == 4


def test_loads_waited_for_in_a_window_keep_that_many_in_flight():
    # 8 loads ahead of their use, each further one issued after a use: 8 a round
    body = [f"LDG.E.CONSTANT R{10 + i}, desc[UR6][R2.64+0x{i:x}0]" for i in range(8)]
    for i in range(8):
        body += [f"FADD R30, R30, R{10 + i}",
                 f"LDG.E.CONSTANT R{10 + i}, desc[UR6][R2.64+0x{8 + i:x}0]"]
    body += [f"FADD R30, R30, R{10 + i}" for i in range(8)]
    r = rounds(_loop(*body))
    assert (r.loads, r.rounds, r.bytes_a_round) == (16, 2, 1024)


def test_the_wide_path_of_an_if_else_counts_not_its_fallback():
    # if (!aligned) 4 scalar loads else one 128-bit load, then the adds
    sass = _loop("BRA !P1, 0x160",
                 "LDG.E.CONSTANT R4, desc[UR6][R2.64]",
                 "LDG.E.CONSTANT R5, desc[UR6][R2.64+0x4]",
                 "LDG.E.CONSTANT R6, desc[UR6][R2.64+0x8]",
                 "LDG.E.CONSTANT R7, desc[UR6][R2.64+0xc]",
                 "BRA 0x170",
                 "LDG.E.128.CONSTANT R4, desc[UR6][R2.64]",
                 "FADD R20, R4, R5", "FADD R21, R6, R7")
    r = rounds(sass)
    assert (r.loads, r.rounds, r.bytes_a_round) == (1, 1, 512)


def test_a_kernel_without_a_loop_is_read_whole():
    sass = _sass("LDG.E.CONSTANT R4, desc[UR6][R2.64]", "LDG.E.CONSTANT R5, desc[UR6][R8.64]",
                 "FADD R6, R4, R5", "STG.E desc[UR6][R10.64], R6", "EXIT")
    r = rounds(sass)
    assert (r.loads, r.rounds, r.bytes_a_round) == (2, 1, 256)
    assert rounds(_sass("FADD R6, R4, R5", "EXIT")) is None
