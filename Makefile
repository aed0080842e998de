SHELL := /bin/bash

# Robot data lives beside the repository (/work/shared/data); made absolute and
# exported so the dataset YAMLs can refer to ${DATA_DIR}.
DATA_DIR ?= ../shared/data/kuka_lwr4
override DATA_DIR := $(abspath $(DATA_DIR))
export DATA_DIR

.PHONY: setup test demo demo-kuka clean

setup:
	bash scripts/setup.sh

test: setup
	bash -c 'source scripts/env.sh && python -m pytest -q src/ident_core/test tests'

demo: setup
	$(MAKE) demo-kuka

demo-kuka:
	source scripts/env.sh && robot-ident identify --urdf $(DATA_DIR)/kuka_lwr4.urdf \
	    --data config/datasets/kuka_lwr4/measurements_1.yaml \
	    --validate config/datasets/kuka_lwr4/measurements_2.yaml config/datasets/kuka_lwr4/measurements_3.yaml \
	    --out output/kuka_lwr4/result.yaml

clean:
	rm -rf build install log
