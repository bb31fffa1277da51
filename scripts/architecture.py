"""
The architecture section of docs/design.md, from the code itself: the figure
docs/images/layers.png (one band per layer of `balgen/plumbing/layers.py`, lowest at
the bottom, with an arrow for the imports from each layer to each lower one)
and the module list between the `modules:begin`/`modules:end` markers (each
module's layer and the first sentence of its docstring). Run it after adding
a module or changing an import: `.venv/bin/python scripts/architecture.py`.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import Counter
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from balgen.plumbing.layers import LAYERS, import_graph, layer_of, module_name  # noqa: E402

OUTPUT = ROOT / "docs" / "images" / "layers.png"
DESIGN = ROOT / "docs" / "design.md"


def layer_edges() -> Counter[tuple[int, int]]:
    """How many module imports go from each layer to each lower one."""
    edges: Counter[tuple[int, int]] = Counter()
    for module, imports in import_graph(ROOT).items():
        source = layer_of(module)
        for target in imports:
            destination = layer_of(target)
            if 0 <= destination < source:
                edges[(source, destination)] += 1
    return edges


def folder_modules(folder: str) -> str:
    """The modules of one layer's folder, wrapped to the band."""
    names = sorted(path.stem for path in (ROOT / "balgen" / folder).glob("*.py") if path.name != "__init__.py")
    lines, line = [], ""
    for name in names:
        if len(line) + len(name) > 95:
            lines.append(line.rstrip(", "))
            line = ""
        line += name + ", "
    lines.append(line.rstrip(", "))
    return "\n".join(lines)


def first_sentence(path: Path) -> str:
    """The first sentence of a module's docstring (up to its first full stop), on one line."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    match = re.match(r"(.+?\.)(\s|$)", paragraph)
    return match.group(1) if match else paragraph


def module_list() -> str:
    """The markdown list of every module, by layer, with its one sentence."""
    by_layer: dict[int, list[str]] = {}
    for path in sorted((ROOT / "balgen").rglob("*.py")):
        module = module_name(path, ROOT)
        if path.name == "__init__.py" and not first_sentence(path):
            continue
        if module == "balgen":
            continue
        by_layer.setdefault(layer_of(module), []).append(f"- `{module}`: {first_sentence(path)}")
    sections = []
    for index in sorted(by_layer, reverse=True):
        sections.append(f"**{index}. `balgen/{LAYERS[index].folder}/`**: {LAYERS[index].purpose}\n\n" + "\n".join(by_layer[index]))
    return "\n\n".join(sections)


def update_design() -> None:
    """Replace the module list in docs/design.md."""
    text = DESIGN.read_text(encoding="utf-8")
    begin, end = "<!-- modules:begin -->", "<!-- modules:end -->"
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    DESIGN.write_text(f"{head}{begin}\n{module_list()}\n{end}{tail}", encoding="utf-8")


def main() -> None:
    edges = layer_edges()
    height = 1.0
    figure, axes = plt.subplots(figsize=(13, 1.05 * len(LAYERS) + 0.6))
    for index, layer in enumerate(LAYERS):
        y = index * (height + 0.25)
        axes.add_patch(FancyBboxPatch((0, y), 8.2, height, boxstyle="round,pad=0.02", facecolor=f"C{index % 10}", alpha=0.18))
        axes.text(0.1, y + height - 0.18, f"{index}. {layer.folder}/: {layer.purpose}", fontsize=9.5, weight="bold", va="top")
        axes.text(0.1, y + height - 0.45, folder_modules(layer.folder), fontsize=7.5, va="top", family="monospace")
    for column, ((source, destination), count) in enumerate(sorted(edges.items(), reverse=True)):
        x = 8.45 + 0.085 * column  # one column per pair of layers, highest source first
        start = source * (height + 0.25) + height * 0.3
        end = destination * (height + 0.25) + height * 0.7
        axes.add_patch(FancyArrowPatch((x, start), (x, end), arrowstyle="-|>", mutation_scale=8, linewidth=0.5 + count / 15, color=f"C{source % 10}"))
    axes.set_xlim(-0.1, 8.6 + 0.085 * len(edges))
    axes.set_ylim(-0.2, len(LAYERS) * (height + 0.25))
    axes.axis("off")
    axes.set_title("balgen layers: every import points down (arrow width ~ number of imports; source layer's colour)", fontsize=10)
    figure.tight_layout()
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(OUTPUT, dpi=110)
    update_design()
    print(f"drew {OUTPUT} ({sum(edges.values())} imports between layers) and the module list of {DESIGN}")


if __name__ == "__main__":
    main()
