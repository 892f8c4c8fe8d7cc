"""The report: index.html (self-contained, with SVG plots) and report.md, checked as
text and opened in a real headless browser (Chromium): the page renders, with its
plots, to a screenshot that is not blank."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from mcl.versions import versions, write_report
from tests.versions.conftest import copy_versions, needs_device

pytestmark = needs_device


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    d = copy_versions(tmp / "v", "matmul", ["perfect", "gpu", "gpu_v1", "hopper_v1"])
    (d / "gpu_v3.mcpl").write_text("module broken;\nimport gpu;\ngpu void matmul(int n) {\n"
                                   "  foreach (int i in n threads) { x = 1; }\n}\n")
    result = versions(d, sizes="small")
    files = write_report(result, tmp / "out")
    return result, tmp / "out", files


def test_report_files_and_contents(report):
    result, out, files = report
    names = {p.name for p in files}
    assert names == {"index.html", "report.md", "time.svg", "roofline.svg"}
    md = (out / "report.md").read_text()
    for heading in ["## Problems", "## Refinement tree", "## Verification",
                    "## Time and roofline", "## Plots", "## Steps"]:
        assert heading in md
    assert "### gpu → gpu_v1" in md and "```diff" in md and "+      local float[p] l_a;" in md
    assert "- disappeared: local memory can be leveraged for a[i, k]" in md
    assert "- other figures: roofline on 'gpu'" in md
    # the version that does not check: a located message, the others verified
    assert re.search(r"gpu_v3\.mcpl:4:\d+: error: .*'x'", md)
    assert "| hopper_v1 | h200 | ✓" in md    # the leaf below hopper: the same chip
    page = (out / "index.html").read_text()
    assert page.count("<svg") == 2 and "gpu_v3.mcpl:4:" in page
    # self-contained: nothing is fetched
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "<script" not in page and "<link" not in page


def _chromium() -> str | None:
    return next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)


def _browser(binary: str, tmp, *args: str) -> subprocess.CompletedProcess:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run",
             f"--user-data-dir={tmp / 'profile'}"]
    return subprocess.run([binary, *flags, *args], capture_output=True, text=True, timeout=180)


def test_report_renders_in_a_headless_browser(report, tmp_path):
    binary = _chromium()
    if binary is None:
        pytest.skip("no chromium binary (Debian: apt-get install chromium)")
    _result, out, _files = report
    url = (out / "index.html").as_uri()
    dom = _browser(binary, tmp_path, "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    # the plots are in the rendered document, with their marks and labels
    assert len(re.findall(r"<svg\b", dom.stdout)) == 2
    assert 'id="roofline"' in dom.stdout and "hopper_v1" in dom.stdout
    assert len(re.findall(r"<path\b", dom.stdout)) > 20
    shot = tmp_path / "shot.png"
    run = _browser(binary, tmp_path, f"--screenshot={shot}", "--window-size=1200,2600", url)
    assert run.returncode == 0 and shot.is_file(), run.stderr[-2000:]
    import matplotlib.image as mpimg
    import numpy as np
    pixels = mpimg.imread(str(shot))[..., :3]
    assert pixels.shape[0] >= 2000 and pixels.shape[1] >= 1000
    colours = np.unique((pixels * 255).astype(np.uint8).reshape(-1, 3), axis=0)
    assert len(colours) > 50                      # text, table shading, plot lines
    assert float(pixels.std()) > 0.05             # not a blank page

    def painted(rgb: int) -> int:
        want = np.array([(rgb >> 16) & 255, (rgb >> 8) & 255, rgb & 255]) / 255
        return int(np.sum(np.all(np.abs(pixels - want) < 0.03, axis=-1)))

    assert painted(0xE7F6E7) > 1000     # the verification table's green cells
    assert painted(0x1F5FA8) > 20       # the time plot's predicted times
    assert painted(0x2B7A0B) > 20       # the time plot's roofline bounds
