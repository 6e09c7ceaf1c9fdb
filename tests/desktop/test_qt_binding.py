"""Guards against a broken Qt binding being installed.

PySide6 6.12.0 decrements the reference count of ``True`` on every emit of a signal
without arguments (pyqtgraph emits one on every repaint); after a few thousand the
interpreter aborts with ``Fatal Python error: bool_dealloc``. pyproject.toml excludes that
release; this test fails with a clear message if a release with the same fault is admitted.
It runs in a subprocess because the fault kills the interpreter.
"""

import subprocess
import sys

PROBE = """
import sys
from PySide6.QtCore import QCoreApplication, QObject, Signal
app = QCoreApplication([])
class Emitter(QObject):
    bare = Signal()
emitter = Emitter()
emitter.bare.connect(lambda: None)
before = sys.getrefcount(True)
for _ in range(200):
    emitter.bare.emit()
print(sys.getrefcount(True) - before)
"""


def test_argument_less_signals_keep_reference_counts_intact():
    result = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60
    )
    import PySide6

    broken = (
        f"PySide6 {PySide6.__version__} loses a reference to True on every argument-less "
        "signal emit; the app would abort after a few thousand repaints. Install a release "
        "allowed by pyproject.toml."
    )
    assert result.returncode == 0, f"{broken}\n{result.stderr[-500:]}"
    assert int(result.stdout.strip()) >= 0, broken
