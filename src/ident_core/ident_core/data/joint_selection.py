"""The robot's joints in joint-state messages that carry other joints too.

On a robot's stack ``joint_states`` carries more joints than the arm (gripper fingers, a mobile
base's wheels), in any order, and often comes from several publishers at different rates (an
arm's and a gripper's ``joint_state_broadcaster``). The rule everywhere in the suite (bag
readers, recorder, torque estimator, excitation): a sample is a message that names every joint
asked for (in any order, with others besides); a message that names only some or none of them
is skipped and counted; a joint that no message names is one error naming it. A time base is
thus never broken by another publisher's messages, and no row lacks a joint.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import InputError


class JointSelection:
    """Picks a robot's joints out of messages by name.

    Parameters
    ----------
    joints : sequence of str
        (n,) the joints wanted, in the order of the columns returned.

    Attributes
    ----------
    joints : list of str
        (n,) as given.
    skipped : int
        Messages given to ``columns`` that lacked a joint.
    """

    def __init__(self, joints: Sequence[str]):
        self.joints = list(joints)
        self.skipped = 0
        self._orders: dict[tuple, np.ndarray | None] = {}
        self._seen: set[str] = set()

    def columns(self, names: Sequence[str]) -> np.ndarray | None:
        """Where the joints are in a message's arrays.

        Parameters
        ----------
        names : sequence of str
            The message's joint names (its ``name`` field); cached per distinct list.

        Returns
        -------
        (n,) ndarray of int or None
            Indices into the message's ``position``, ``velocity`` and ``effort`` of the joints
            in ``joints`` order (a name listed twice: its first entry); None, counted in
            ``skipped``, when the message lacks one of them.
        """
        key = tuple(names)
        try:
            order = self._orders[key]
        except KeyError:
            order = self._orders[key] = self._order(key)
        if order is None:
            self.skipped += 1
        return order

    def _order(self, names: tuple) -> np.ndarray | None:
        index: dict[str, int] = {}
        for i, name in enumerate(names):
            index.setdefault(name, i)
        self._seen.update(j for j in self.joints if j in index)
        if any(j not in index for j in self.joints):
            return None
        return np.array([index[j] for j in self.joints], dtype=np.intp)

    def missing(self) -> list[str]:
        """The joints no message has named so far.

        Returns
        -------
        list of str
            Those of ``joints`` absent from every message given to ``columns``, in
            ``joints`` order.
        """
        return [j for j in self.joints if j not in self._seen]

    def problem(self, where: str) -> str:
        """Why no message was a sample, for an error message.

        Parameters
        ----------
        where : str
            What the messages came from (the topic, the bag).

        Returns
        -------
        str
            Names the joints that never appeared, or says that they appeared only in separate
            messages.
        """
        missing = self.missing()
        if missing:
            return (f'{where}: no message carries joint(s) {", ".join(missing)} '
                    f'({self.skipped} message(s) without them)')
        return (f'{where}: no message carries all of the joints {", ".join(self.joints)} '
                f'together (they come in separate messages, {self.skipped} of them)')

    def error(self, where: str) -> InputError:
        """``problem`` as an exception.

        Parameters
        ----------
        where : str
            What the messages came from, as for ``problem``.

        Returns
        -------
        InputError
            With ``problem(where)`` as its message, for the caller to raise.
        """
        return InputError(self.problem(where))
