"""The node description and skel.explain: what each call moves over which link."""

from __future__ import annotations

import numpy as np
import pytest

import mcl.skel as sk
from mcl.diagnostics import McplError
from mcl.hdl import HardwareLibrary
from mcl.skel.explanation import NODES


def test_node_description_is_valid():
    lib = HardwareLibrary([NODES])
    assert not [d for d in lib.diagnostics("h200x2") if d.is_error]
    node = sk.load_node("h200x2")
    assert node.devices == 2 and node.unit == "gpus.gpu"
    assert node.device_link.name == "nvlink" and node.device_link.bandwidth == 450e9
    assert node.host_link.name == "pcie" and node.host_link.bandwidth == 64e9
    assert node.bandwidth == 4800e9
    assert 60e12 < node.peak_flops < 70e12          # per GPU, not for both


def test_unknown_node():
    with pytest.raises(McplError) as e:
        sk.load_node("nothing")
    assert e.value.diagnostics[0].code == "skel-unknown-node"


def test_explain_block_to_copy_over_nvlink(on_devices):
    on_devices(2)

    def program(n):
        a = sk.Map("float f(float x) { return 2.0f * x; }")(sk.Vector(np.ones(n, np.float32)))
        a.distribution = sk.copy()
        return sk.Map("float g(float x) { return x + 1.0f; }")(a).to_numpy()

    ex = sk.explain(program, 1 << 16)
    text = str(ex)
    assert "block() -> copy(): moves 131 kB gpus.gpu[1] -> gpus.gpu[0] over nvlink" in text
    assert "host -> block(): moves 131 kB host -> gpus.gpu[0] over pcie" in text
    assert "gpus.gpu[1]: 65536 elements" in text and "memory bound" in text
    assert "copy() -> host: moves 262 kB gpus.gpu[0] -> host over pcie" in text
    assert [c.skeleton for c in ex.calls] == ["Map", "Map"]
    # 131 kB over 450 GB/s plus the link latency
    nv = [t for t in ex.calls[1].transfers if t.kind == "device"]
    assert len(nv) == 2 and all(t.nbytes == 1 << 17 for t in nv)


def test_explain_halo_exchange(on_devices):
    on_devices(3)
    m = sk.Matrix(np.ones((30, 8), np.float32))
    heat = sk.Stencil("float h(float_matrix_t m) { return get(m, -1, 0); }", 1)
    ex = sk.explain(lambda: heat(m, iterations=4))
    halo = [t for t in ex.calls[0].transfers if "halo" in t.what]
    # 3 exchanges x (2 inner boundaries x 2 directions) x one row of 8 floats
    assert len(halo) == 12 and all(t.nbytes == 32 for t in halo)
    assert "over nvlink" in str(ex)


def test_cli_explain(run_cli, on_devices):
    on_devices(2)
    code, out, err = run_cli("skel", "explain", "examples/skel/saxpy.py", "--size", "1000")
    assert code == 0, err
    assert "saxpy: size 1000 on 2 device(s): matches numpy" in out
    assert "Zip 'saxpy':" in out and "over pcie" in out and "gpus.gpu[1]: 500 elements" in out
    code, _, err = run_cli("skel", "explain", "no/such/program.py")
    assert code == 1 and "no such program" in err
    code, _, err = run_cli("skel", "explain", "--node", "nothing", "examples/skel/saxpy.py")
    assert code == 1 and "no node description" in err


def test_operations_of_mcpl_function_count_loops(tmp_path):
    from mcl.skel.explanation import operations_per_call
    f = tmp_path / "poly.mcpl"
    f.write_text("module poly;\nimport perfect;\n"
                 "perfect float poly(float x) {\n  float s = 0.0;\n"
                 "  for (int i = 0; i < 8; i++) {\n    s = s * x + 1.0;\n  }\n  return s;\n}\n")
    func = sk.mcpl_function(f, "poly")
    assert func.flops == 16                       # 8 iterations of a multiply and an add
    assert operations_per_call(func) == 16
    text = sk.Map("float p(float x) { float s = 0; for (int i = 0; i < 8; i++) "
                  "s = s * x + 1; return s; }").func
    assert operations_per_call(text) == 2          # the text's operators: a lower bound


def test_cli_explain_peer_copies(run_cli, on_devices, tmp_path):
    on_devices(2)
    prog = tmp_path / "app.py"
    prog.write_text("import numpy as np, mcl.skel as sk\nsk.init()\n"
                    "a = sk.Map('float f(float x) { return x; }')(sk.Vector(np.ones(1000, "
                    "np.float32)))\na.distribution = sk.copy()\n"
                    "sk.Map('float g(float x) { return x; }')(a)\n")
    code, out, err = run_cli("skel", "explain", str(prog))
    assert code == 0, err
    assert "block() -> copy(): moves 2 kB gpus.gpu[1] -> gpus.gpu[0] over pcie (through the " \
           "host)" in out
    code, out, err = run_cli("skel", "explain", "--peer-copies", str(prog))
    assert code == 0, err
    assert "block() -> copy(): moves 2 kB gpus.gpu[1] -> gpus.gpu[0] over nvlink" in out


def test_explain_fused_dot_product(on_devices):
    on_devices(2)
    x = sk.Vector(np.ones(1000, np.float32))
    y = sk.Vector(np.ones(1000, np.float32))
    mult = sk.Zip("float mult(float x, float y) { return x * y; }")
    total = sk.Reduce("float add(float x, float y) { return x + y; }")
    ex = sk.explain(lambda: total(mult.lazy(x, y)).to_numpy())
    assert [c.skeleton for c in ex.calls] == ["Reduce"]
    # each device reads its 500 elements of both inputs: 4 kB, no temporary written
    assert ex.calls[0].work[1] == (500, 1000.0, 4000.0)
    assert "gpus.gpu[1]: 500 elements" in str(ex)


def test_explain_on_fewer_devices_than_the_node_says_so(on_devices):
    """The node has two GPUs; a run on one puts the data on the first only, and the
    explanation says why no move goes to the second."""
    on_devices(1)
    x = sk.Vector(np.ones(64, np.float32))
    ex = sk.explain(lambda: sk.Map("float f(float v) { return 2 * v; }")(x), node="h200x2")
    text = str(ex)
    assert ex.run_devices == 1 and "2 devices" in text
    assert "note: the run had 1 device(s), so the data went to gpus.gpu[0] only" in text
    assert "gpus.gpu[1]" not in text


def test_a_node_file_that_does_not_parse_says_why(tmp_path):
    """--node mynode --hwd-path DIR with DIR/mynode.hdl broken said 'no node
    description 'mynode''."""
    (tmp_path / "mynode.hdl").write_text("broken {\n")
    with pytest.raises(McplError) as e:
        sk.load_node("mynode", [str(tmp_path)])
    [d] = e.value.diagnostics
    assert d.code == "hdl-syntax" and d.span.file.endswith("mynode.hdl")


def test_a_node_given_as_a_path_names_the_option_to_use():
    with pytest.raises(McplError) as e:
        sk.load_node(str(NODES / "h200x2.hdl"))
    [d] = e.value.diagnostics
    assert d.code == "skel-unknown-node" and "takes the name of a node description, not a " \
        "path" in d.message and "--hwd-path" in d.hint


def test_a_program_that_uses_no_skeleton_has_nothing_to_explain(run_cli, on_devices, tmp_path):
    """It printed the node's header and 'the data went to gpus.gpu[0] only' (no data went
    anywhere), exit status 0."""
    on_devices(1)
    program = tmp_path / "plain.py"
    program.write_text("import sys\nprint('plain', sys.argv[1:])\n")
    code, out, err = run_cli("skel", "explain", "--devices", "1", program, "x")
    assert code == 1 and "plain ['x']" in out
    assert "made no skeleton call and moved no data" in err and "nothing to explain" in err
    assert "data went to" not in out + err and "Traceback" not in out + err
