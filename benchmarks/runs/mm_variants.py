"""Variants of a matmul version for exploration rounds: each flag of the name
applies one change to the source (written to DIR/<stem>_<flags>.mcpl)."""
import sys
from pathlib import Path

CHANGES = {
    "l216": [("int ti = (w / 2) * 4 + t / 8;          // 0 .. 15", "int ti = tid / 16;"),
             ("int tj = (w % 2) * 8 + t % 8;          // 0 .. 15", "int tj = tid % 16;")],
    "pad0": [("const int pad = 4;", "const int pad = 0;")],
    "2d": [("""  foreach (int bid in nrBlocks blocks) {
    int inGroups = bid / (group * nrBlocksM);
    int firstRow = inGroups * group;
    int rows = min(nrBlocksN - firstRow, group);
    int bi = firstRow + (bid % (group * nrBlocksM)) % rows;
    int bj = (bid % (group * nrBlocksM)) / rows;
""", """  foreach (int bi in nrBlocksN blocks) {
  foreach (int bj in nrBlocksM blocks) {
"""), ("\n  }\n}\n", "\n  }\n  }\n}\n")],
}


def main() -> None:
    src, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for combo in sys.argv[3:]:
        text = src.read_text()
        for flag in combo.split("+"):
            for old, new in CHANGES[flag]:
                assert old in text, (flag, old)
                if flag == "2d" and old.startswith("\n  }"):
                    i = text.rstrip().rfind(old.strip("\n"))
                    text = text[:i] + new.strip("\n") + "\n"
                else:
                    text = text.replace(old, new)
        (out / f"{src.stem}_{combo.replace('+', '_')}.mcpl").write_text(text)


if __name__ == "__main__":
    main()
