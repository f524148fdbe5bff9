"""The public API is what ckptbench.__all__ lists, and every name exists."""

import ckptbench


def test_every_public_name_exists_and_is_sorted():
  assert ckptbench.__all__ == sorted(ckptbench.__all__)
  for name in ckptbench.__all__:
    assert hasattr(ckptbench, name), name


def test_benchmark_options_decorator_misuse_is_a_clear_type_error():
  import dataclasses

  import pytest

  with pytest.raises(TypeError, match="expects a subclass of ckptbench.BenchmarkOptions"):
    ckptbench.benchmark_options(int)

  @dataclasses.dataclass(frozen=True)
  class Opts(ckptbench.BenchmarkOptions):
    x: int = 1

  with pytest.raises(TypeError, match="must decorate a subclass of ckptbench.BenchmarksGenerator"):
    ckptbench.benchmark_options(Opts)(object)

  class NotDataclass(ckptbench.BenchmarkOptions):
    pass

  # A subclass without its own @dataclass still is a dataclass through its base: accepted.
  assert ckptbench.benchmark_options(NotDataclass)
