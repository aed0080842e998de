"""The test support's spin helper, with a stand-in executor."""
import pytest

from ident_ros.testing import spin_until


class Executor:
    def __init__(self):
        self.spins = 0

    def spin_once(self, timeout_sec):
        self.spins += 1


def test_spins_until_the_condition_holds():
    executor = Executor()
    spin_until(executor, lambda: executor.spins == 3, 'three spins', timeout=60.0)
    assert executor.spins == 3


def test_a_condition_that_never_holds_fails_naming_it():
    with pytest.raises(AssertionError, match='waiting for the reply'):
        spin_until(Executor(), lambda: False, 'the reply', timeout=0.0)
