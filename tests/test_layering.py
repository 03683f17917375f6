#!/usr/bin/env python3
"""The layering check finds an upward include and accepts downward ones (a synthetic tree)."""
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import layering_check  # noqa: E402


def write(root, path, text):
    file = root / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text)


with tempfile.TemporaryDirectory() as tmp:
    root = pathlib.Path(tmp)
    write(root, "spaces/kgemm/spaces/facts.hpp", '#include <vector>\n')
    write(root, "kernels/kgemm/config.hpp", '#include "kgemm/spaces/facts.hpp"\n')
    write(root, "dispatch/kgemm/dispatch/store.hpp", '#include "kgemm/config.hpp"\n')
    write(root, "tuner/kgemm/tuner/search.hpp", '#include "kgemm/dispatch/store.hpp"\n')
    write(root, "cli/kgemm/cli/options.hpp", '#include "kgemm/tuner/search.hpp"\n')
    write(root, "tools/autotune.cpp", '#include "kgemm/cli/options.hpp"\n')
    assert layering_check.violations(root) == [], layering_check.violations(root)
    write(root, "spaces/kgemm/spaces/traits.hpp", '#include "kgemm/config.hpp"\n')
    write(root, "kernels/kgemm/launch.hpp", '#include "kgemm/tuner/search.hpp"\n')
    write(root, "python/src/module.cpp", '#include "kgemm/cli/options.hpp"\n')
    found = layering_check.violations(root)
    assert len(found) == 3, found
    assert any("python/src/module.cpp" in line and "beside python/" in line for line in found), found
    assert any("spaces/kgemm/spaces/traits.hpp" in line and "from kernels/" in line for line in found), found
    assert any("kernels/kgemm/launch.hpp" in line and "from tuner/" in line for line in found), found
print("layering check: finds upward includes, accepts downward ones")
