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

import yaml
from rclpy.action import ActionClient
from std_srvs.srv import Trigger

from ident_core.errors import IdentError
from ident_core.evaluation import compare, load_ground_truth, validate_bag_noise_free
from ident_core.readers import excitation_window
from ident_core.results import read_result, write_atomic
from ident_msgs.action import RunExcitation
from ident_msgs.msg import IdentifiedParameters
from ident_msgs.srv import IdentifyRecording
from ident_node import runtime

PARAMETERS = {
    'identification_trajectory': '',
    'identification_periods': 0,
    'validation_trajectory': '',
    'output_dir': 'output/demo',
    'ground_truth_dir': 'output/demo/ground_truth',
    'excitation_action': '/excitation_node/run',
    'identify_service': '/identification_node/identify',
    'parameters_topic': '/identification_node/parameters',
    'ground_truth_service': '/ident_sim/write_ground_truth',
    'excitation_topic': '/excitation_node/trajectory',
    'server_timeout': 30.0,
}


class DemoFailed(RuntimeError):
    """A step of the demo failed."""


class DemoNode(runtime.GracefulNode):
    """Drives the graph through one identification experiment."""

    def __init__(self):
        super().__init__('demo')
        self.p = {k: runtime.parameter(self, k, v) for k, v in PARAMETERS.items()}
        self.out = Path(self.p['output_dir']).resolve()
        self.excite = ActionClient(self, RunExcitation, self.p['excitation_action'])
        self.identify = self.create_client(IdentifyRecording, self.p['identify_service'])
        self.truth = self.create_client(Trigger, self.p['ground_truth_service'])
        self.parameters = None
        self.create_subscription(IdentifiedParameters, self.p['parameters_topic'],
                                 self._on_parameters, runtime.LATCHED_QOS)
        self.started = time.monotonic()
        self.task = None
        self.create_timer(0.1, self._start_once)
        self.summary = {}

    def _on_parameters(self, msg) -> None:
        self.parameters = msg

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
        except (DemoFailed, IdentError) as exc:
            self.get_logger().error(f'demo failed: {exc}')
            self.exit_code = 1
        self.finished = True

    async def _demo(self) -> None:
        timeout = self.p['server_timeout']
        if not self.excite.wait_for_server(timeout_sec=timeout):
            raise DemoFailed(f'action {self.p["excitation_action"]} not available')
        bags = {}
        for name, key, periods in (('identification', 'identification_trajectory',
                                    self.p['identification_periods']),
                                   ('validation', 'validation_trajectory', 0)):
            bags[name] = await self._excite(name, self.p[key], periods)
        await self._call(self.truth, Trigger.Request(), 'write the ground truth')
        reply = await self._call(self.identify, IdentifyRecording.Request(
            bag_path=bags['identification'], validation_bag_paths=[bags['validation']],
            result_path=str(self.out / 'RESULT.yaml')), 'identify')
        self._report(reply.result_path, bags)

    async def _excite(self, name: str, trajectory: str, periods: int) -> str:
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
        result = (await handle.get_result_async()).result
        if not result.success:
            raise DemoFailed(f'{name} excitation: {result.message}')
        self.get_logger().info(f'{name}: {result.duration:.1f} s of motion recorded in '
                               f'{result.bag_path}')
        return result.bag_path

    async def _call(self, client, request, what: str):
        if not client.wait_for_service(timeout_sec=self.p['server_timeout']):
            raise DemoFailed(f'{what}: service {client.srv_name} not available')
        reply = await client.call_async(request)
        if not reply.success:
            raise DemoFailed(f'{what}: {reply.message}')
        return reply

    def _report(self, result_path: str, bags: dict) -> None:
        model = read_result(result_path)
        truth = load_ground_truth(self.p['ground_truth_dir'])
        comparison = compare(model, truth)
        window = excitation_window(Path(bags['validation']), self.p['excitation_topic'])
        metrics = validate_bag_noise_free(model, bags['validation'], truth, window=window)
        if self.parameters is None:
            raise DemoFailed(f'no IdentifiedParameters received on {self.p["parameters_topic"]}')
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
        write_atomic(self.out / 'summary.yaml', yaml.safe_dump(summary, sort_keys=False))
        print('\n'.join(lines), flush=True)


def main(args=None):
    sys.exit(runtime.run(DemoNode, args=args))
