"""The torch tests need torch and the built qccl.torch package (ctest puts <build>/python on
PYTHONPATH); without them they are skipped with the reason."""
import pytest

try:
    import qccl.torch  # noqa: F401
    MISSING = None
except Exception as e:  # torch not installed, or the package not built
    MISSING = f"qccl.torch not importable: {e}"


def pytest_collection_modifyitems(config, items):
    if MISSING:
        for item in items:
            item.add_marker(pytest.mark.skip(reason=MISSING))
