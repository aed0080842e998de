SHELL := /bin/bash

# Robot recordings: data/ when scripts/fetch_data.sh put them there, else beside the repository
# (../shared/data); the same order as scripts/data_dirs.py. DATA_DIR (KUKA LWR4+) and TX40_DIR
# are made absolute and exported so the dataset descriptions can use ${DATA_DIR}.
DATA_DIR ?= $(firstword $(wildcard data/kuka_lwr4) ../shared/data/kuka_lwr4)
TX40_DIR ?= $(firstword $(wildcard data/staubli_tx40) ../shared/data/staubli_tx40)
override DATA_DIR := $(abspath $(DATA_DIR))
override TX40_DIR := $(abspath $(TX40_DIR))
export DATA_DIR TX40_DIR
# The ROS 2 distribution of the set-up, the tests and the demos: jazzy (default) or kilted, each
# in its own .venv-<distro>/ and install-<distro>/ (scripts/setup.sh, scripts/env.sh).
ROS_DISTRO ?= jazzy
export ROS_DISTRO
ENV := source scripts/env.sh &&
# The tests of the ROS side (nodes, launch runner, the graph) and those of the core alone
NODE_TESTS := $(filter-out src/ident_core/test,$(wildcard src/*/test)) tests/test_ros_graph.py \
    tests/test_ident_msgs.py tests/test_rviz_config.py tests/test_node_config.py
CORE_TESTS := src/ident_core/test tests/test_bad_inputs.py
KUKA := config/datasets/kuka_lwr4
KUKA_FILES := kuka_lwr4.urdf measurements_1.npz measurements_2.npz measurements_3.npz
TX40_FILES := tx40_mdh_modified.urdf pos_read_data.csv curr_data.csv
# $(call need,DIR,FILES,WHAT,VARIABLE): stop with one line when a file is missing
need = $(if $(filter-out $(wildcard $(addprefix $(1)/,$(2))),$(addprefix $(1)/,$(2))),$(error \
    $(3) recordings not found in $(1): run scripts/fetch_data.sh (or set $(4)=/path)))

.PHONY: setup test test-nodes test-lowest demo demo-sim demo-scara demo-payload demo-friction demo-kuka demo-tx40 bench \
	clean need-kuka need-tx40

setup:
	bash scripts/setup.sh

test: setup
	$(ENV) ruff check . && python -m pytest -q src/*/test tests

# The ROS side alone: CI's job on the other distribution (ROS_DISTRO=kilted make test-nodes).
test-nodes: setup
	$(ENV) python -m pytest -q $(NODE_TESTS)

# The core's tests on the lowest library versions it supports (requirements/lowest.txt, no ROS):
# those of Ubuntu 24.04 (numpy 1.26, scipy 1.11, matplotlib 3.6) and the lowest others that work.
test-lowest:
	bash scripts/setup.sh --lowest
	PYTHONPATH=src/ident_core .venv-lowest/bin/python -m pytest -q -p no:cacheprovider $(CORE_TESTS)

# The main job: the ROS 2 graph on the simulated 6-axis arm (excitation -> recording ->
# identification -> validation), results in output/demo/; then the torque estimates of the
# validation run against the simulator's true torques (TORQUES.csv) and the report of it all
# (output/demo/report/index.html).
demo: setup demo-sim

demo-sim:
	$(ENV) ROS_DOMAIN_ID=$${ROS_DOMAIN_ID:-$$(( $$$$ % 100 + 100 ))} \
	    ident_launch ident_bringup sim.launch.yaml demo:=true output_dir:=output/demo
	$(ENV) robot-ident estimate-torque --model output/demo/RESULT.yaml \
	    --data "$$(ls -d output/demo/bags/validation_* | tail -n 1)" \
	    --truth output/demo/ground_truth --out output/demo/TORQUES.csv
	$(ENV) robot-ident report --model output/demo/RESULT.yaml --torques output/demo/TORQUES.csv \
	    --out output/demo/report

# The same graph on the simulated SCARA of scara_kalman_torque_estimation_2018
# (config/scara_3dof/: the paper's excitation, N = 6, wf = 2π·0.08 rad/s); the torque
# estimator takes the identified model when it is published. Results in output/demo_scara/.
demo-scara: setup
	$(ENV) ROS_DOMAIN_ID=$${ROS_DOMAIN_ID:-$$(( $$$$ % 100 + 100 ))} \
	    ident_launch ident_bringup sim.launch.yaml robot:=scara_3dof demo:=true \
	    output_dir:=output/demo_scara

# Payload identification on the simulated arm: the same excitation without and with a 3 kg
# payload (mounted by the simulator's ~/set_payload between the runs), every payload method
# against the true payload; results in output/demo_payload/ (payload_table.txt, summary.yaml).
demo-payload: setup
	$(ENV) ROS_DOMAIN_ID=$${ROS_DOMAIN_ID:-$$(( $$$$ % 100 + 100 ))} \
	    ident_launch ident_bringup sim.launch.yaml payload_demo:=true payload_mass:=3.0 \
	    payload_mounted:=false output_dir:=output/demo_payload

# Friction identification on the simulated arm with improved-Stribeck friction of the size of
# stribeck_friction_sa_ga_2020 Table 3: the rigid body identified on a Fourier excitation, one
# joint-wise cosine experiment per joint, ~/identify_friction by every model and optimiser, the
# improved Stribeck parameters against the truth; results in output/demo_friction/
# (friction_table.txt, summary.yaml). About 15–20 min after set-up (the simulator runs in real time).
demo-friction: setup
	$(ENV) ROS_DOMAIN_ID=$${ROS_DOMAIN_ID:-$$(( $$$$ % 100 + 100 ))} \
	    ident_launch ident_bringup sim.launch.yaml friction_demo:=true \
	    sim_params:=config/six_axis_3kg/ident_sim_friction.yaml \
	    excitation_params:=config/six_axis_3kg/excitation_node_friction.yaml \
	    identification_params:=config/six_axis_3kg/identification_node_friction.yaml \
	    output_dir:=output/demo_friction

need-kuka:
	@$(call need,$(DATA_DIR),$(KUKA_FILES),KUKA LWR4+,DATA_DIR):

need-tx40:
	@$(call need,$(TX40_DIR),$(TX40_FILES),Staubli TX40,TX40_DIR):

demo-kuka: need-kuka setup
	$(ENV) robot-ident identify --urdf $(DATA_DIR)/kuka_lwr4.urdf --data $(KUKA)/measurements_1.yaml \
	    --validate $(KUKA)/measurements_2.yaml $(KUKA)/measurements_3.yaml \
	    --out output/kuka_lwr4/result.yaml --report output/kuka_lwr4/report

demo-tx40: need-tx40 setup
	$(ENV) robot-ident identify --urdf $(TX40_DIR)/tx40_mdh_modified.urdf \
	    --data config/datasets/staubli_tx40/tx40.yaml --split 0.7 --rotor-inertia \
	    --out output/staubli_tx40/result.yaml --report output/staubli_tx40/report

bench: setup
	$(ENV) pip install -q -r benchmarks/requirements.txt \
	    && python benchmarks/bench_identify.py --both \
	    && python benchmarks/bench_real_data.py && python benchmarks/bench_excitation.py \
	    && python benchmarks/bench_payload.py && python benchmarks/bench_torque_estimator.py

clean:
	rm -rf build-* install-* log
