"""The project's C++ sources under pkg/, controllers/ and cmd/, for the hack/check-*.py checks."""
import os


def tree_files(root):
    """Yields (path relative to root, text) of every .h and .cc file under pkg/, controllers/, cmd/."""
    for top in ("pkg", "controllers", "cmd"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if name.endswith((".h", ".cc")):
                    full = os.path.join(dirpath, name)
                    with open(full, encoding="utf-8") as f:
                        yield os.path.relpath(full, root), f.read()
