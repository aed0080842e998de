"""The simulated end-to-end demo (``make demo``), as a client of the running graph:

excitation (recorded) → validation trajectory (recorded) → identification service →
identified vs true base parameters and validation against the noise-free torques.
Results go to ``output_dir`` (RESULT.yaml, summary.yaml, the table); the bags to the recorder's
folder. Exit code 0 only if every step succeeded.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

from pydantic import Field, NonNegativeInt, PositiveFloat
from rclpy.action import ActionClient
from std_srvs.srv import Trigger

from ident_core.data.readers import EXCITATION_TOPIC, excitation_window
from ident_core.errors import IdentError
from ident_core.estimation.results import read_result
from ident_core.files import dump_yaml, write_atomic
from ident_core.schema import Schema
from ident_core.sim.evaluation import compare, load_ground_truth, validate_bag_noise_free
from ident_msgs.action import RunExcitation
from ident_msgs.msg import IdentifiedParameters
from ident_msgs.srv import IdentifyRecording
from ident_ros import lifecycle, qos
from ident_ros.parameters import declare_parameters
from ident_ros.robot_description import RobotDescriptionParameters, robot_model
from ident_ros.worker import while_served


class DemoClientParameters(Schema):
    """What every demo client has: where its results go and the interfaces it shares."""

    output_dir: str = Field('output/demo', description='Folder of the results.')
    ground_truth_dir: str = Field('output/demo/ground_truth',
                                  description="Folder of the simulator's ground truth.")
    excitation_action: str = Field('excitation_node/run',
                                   description='RunExcitation action of the graph.')
    identify_service: str = Field('identification_node/identify',
                                  description='IdentifyRecording service of the graph.')
    server_timeout: PositiveFloat = Field(30.0, description='Time to wait for each server [s].')


class DemoParameters(DemoClientParameters):
    """Parameters of the demo client (and those of ``DemoClientParameters``)."""

    identification_trajectory: str = Field(
        '', description='Trajectory file of the identification experiment.')
    identification_periods: NonNegativeInt = Field(
        0, description='Periods of the identification experiment (0: as in its file).')
    validation_trajectory: str = Field('', description='Trajectory file of the validation '
                                       'experiment.')
    parameters_topic: str = Field('identification_node/parameters',
                                  description='IdentifiedParameters topic of the graph.')
    ground_truth_service: str = Field('ident_sim/write_ground_truth',
                                      description='Trigger service of the graph that writes '
                                                  'the truth log.')
    excitation_topic: str = Field(EXCITATION_TOPIC,
                                  description='ExcitationTrajectory topic in the bags.')


class DemoFailed(RuntimeError):
    """A step of the demo failed."""


class DemoClient(lifecycle.GracefulNode):
    """A client that drives the running graph through an experiment once, then finishes (exit
    code 0 only if every step succeeded; 1 on a failed step or a signal).

    Subclasses implement ``_demo`` (a coroutine; raise ``DemoFailed`` for a failed step).

    Parameters
    ----------
    name : str
        Node name.
    parameters : type
        The parameter model (``declare_parameters``), a ``DemoClientParameters``; one that is
        also a ``RobotDescriptionParameters`` gives the client a ``robot``, loaded (or awaited
        on its topic) before the demo starts.
    **kwargs
        Passed to ``rclpy.node.Node``.
    """

    def __init__(self, name: str, parameters: type, **kwargs):
        super().__init__(name, **kwargs)
        self.p = declare_parameters(self, parameters)
        self.robot = (robot_model(self, self.p)
                      if isinstance(self.p, RobotDescriptionParameters) else None)
        self.out = Path(self.p.output_dir).resolve()
        self.excite = ActionClient(self, RunExcitation, self.p.excitation_action)
        self.started = time.monotonic()
        self.task = None
        self.create_timer(0.1, self._start_once)

    def _start_once(self) -> None:
        if self.task is None:
            self.task = self.executor.create_task(self._run())

    def request_shutdown(self) -> None:
        self.get_logger().warning('interrupted')
        self.exit_code = 1
        self.finished = True

    async def _run(self) -> None:
        try:
            await self._demo()
        except (DemoFailed, IdentError, RuntimeError) as exc:    # RuntimeError: a server died
            self.get_logger().error(f'demo failed: {exc}')
            self.exit_code = 1
        self.finished = True

    async def _demo(self) -> None:
        raise NotImplementedError

    async def _excite(self, name: str, trajectory: str, periods: int) -> str:
        """Run a trajectory file, recorded as experiment ``name``; the bag folder."""
        goal = RunExcitation.Goal(trajectory_file=trajectory, periods=periods, record=True,
                                  experiment=name)
        shown = [-1]

        def feedback(msg):
            f = msg.feedback
            step = int(f.progress * 10)
            if step > shown[0]:
                shown[0] = step
                self.get_logger().info(f'{name}: {f.phase} {100 * f.progress:3.0f} %')
        handle = await self.excite.send_goal_async(goal, feedback_callback=feedback)
        if not handle.accepted:
            raise DemoFailed(f'{name} excitation rejected')
        result = (await while_served(self, handle.get_result_async(),
                                     self.excite.server_is_ready, f'{name} excitation')).result
        if not result.success:
            raise DemoFailed(f'{name} excitation: {result.message}')
        self.get_logger().info(f'{name}: {result.duration:.1f} s of motion recorded in '
                               f'{result.bag_path}')
        return result.bag_path

    async def _call(self, client, request, what: str):
        """Call a service whose response has ``success`` and ``message``; the response."""
        if not client.wait_for_service(timeout_sec=self.p.server_timeout):
            raise DemoFailed(f'{what}: service {client.srv_name} not available')
        reply = await while_served(self, client.call_async(request), client.service_is_ready,
                                   what)
        if not reply.success:
            raise DemoFailed(f'{what}: {reply.message}')
        return reply


class DemoNode(DemoClient):
    """Drives the graph through one identification experiment (module docstring)."""

    def __init__(self, **kwargs):
        super().__init__('demo', DemoParameters, **kwargs)
        self.identify = self.create_client(IdentifyRecording, self.p.identify_service)
        self.truth = self.create_client(Trigger, self.p.ground_truth_service)
        self.parameters = None
        self.create_subscription(IdentifiedParameters, self.p.parameters_topic,
                                 self._on_parameters, qos.LATCHED_QOS)

    def _on_parameters(self, msg) -> None:
        self.parameters = msg

    async def _demo(self) -> None:
        timeout = self.p.server_timeout
        if not self.excite.wait_for_server(timeout_sec=timeout):
            raise DemoFailed(f'action {self.p.excitation_action} not available')
        bags = {}
        for name, trajectory, periods in (
                ('identification', self.p.identification_trajectory,
                 self.p.identification_periods),
                ('validation', self.p.validation_trajectory, 0)):
            bags[name] = await self._excite(name, trajectory, periods)
        await self._call(self.truth, Trigger.Request(), 'write the ground truth')
        reply = await self._call(self.identify, IdentifyRecording.Request(
            bag_path=bags['identification'], validation_bag_paths=[bags['validation']],
            result_path=str(self.out / 'RESULT.yaml')), 'identify')
        self._report(reply.result_path, bags)

    def _report(self, result_path: str, bags: dict) -> None:
        model = read_result(result_path)
        truth = load_ground_truth(self.p.ground_truth_dir)
        comparison = compare(model, truth)
        window = excitation_window(Path(bags['validation']),
                                   self.resolve_topic_name(self.p.excitation_topic))
        metrics = validate_bag_noise_free(model, bags['validation'], truth, window=window)
        if self.parameters is None:
            raise DemoFailed(f'no IdentifiedParameters received on {self.p.parameters_topic}')
        within = comparison.fraction_within(3.0)
        table = comparison.table()
        lines = [table, '',
                 f'{100 * within:.1f} % of {len(comparison.names)} base parameters within 3 std '
                 f'of the truth',
                 f'validation ({Path(bags["validation"]).name}) against the noise-free torques: '
                 f'relative error {metrics["relative_error_percent"]:.3f} %, '
                 f'NRMS {metrics["nrms_percent"]:.3f} %, RMSE per joint '
                 + ' '.join(f'{x:.3g}' for x in metrics['rmse']) + ' N·m',
                 f'demo time {time.monotonic() - self.started:.1f} s (graph running)']
        write_atomic(self.out / 'parameters.txt', '\n'.join(lines) + '\n')
        summary = {'result': result_path, 'bags': bags,
                   'within_3_std': within, 'base_parameters': len(comparison.names),
                   'max_abs_z': float(abs(comparison.z).max()),
                   'validation_noise_free': {k: metrics[k] for k in
                                             ('relative_error_percent', 'nrms_percent')},
                   'parameters_message_samples': int(self.parameters.samples),
                   'demo_seconds': time.monotonic() - self.started}
        write_atomic(self.out / 'summary.yaml', dump_yaml(summary))
        print('\n'.join(lines), flush=True)


def main(args=None):
    """Console script ``demo``."""
    sys.exit(lifecycle.run(DemoNode, args=args))
