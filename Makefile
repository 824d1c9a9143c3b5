# SPDX-License-Identifier: GPL-2.0
#
# pwthrottle. The kernel build reads ./Kbuild; this file is for people.
#
#   make                 build against the running kernel (KDIR to override)
#   make KVER=REL        build against a kernel fetched by scripts/fetch-kernel
#   make demo            the 2005 experiment in QEMU, stock vs pwthrottle
#   make check           everything: deps, kernels, W=1 builds, unit + VM tests
#   make bench           the full benchmark matrix into bench/results/
#   make unit            host unit tests only (ASan/UBSan), no VM
#   make clean

PWT_CACHE ?= /var/tmp/pwthrottle
export PWT_CACHE
ifneq ($(KVER),)
KDIR ?= $(PWT_CACHE)/kernels/$(KVER)/build
else
KDIR ?= /lib/modules/$(shell uname -r)/build
endif

CC ?= gcc
SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=all
HOST_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror -Iinclude

all: module

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

build/unit/test_predict: test/unit/test_predict.c module/predict.c include/pwt_predict.h
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) $(SANITIZE) -o $@ test/unit/test_predict.c module/predict.c

build/tools/pwt-writer: test/tools/pwt-writer.c
	@mkdir -p $(dir $@)
	$(CC) -static -O2 -Wall -Wextra -Werror -o $@ $<

unit: build/unit/test_predict
	build/unit/test_predict

tools: build/tools/pwt-writer

check:
	scripts/check

demo:
	scripts/demo

bench:
	scripts/bench

clean:
	rm -rf build
	rm -f *.o *.ko *.mod *.mod.c .*.cmd modules.order Module.symvers module/*.o module/.*.cmd

.PHONY: all module unit tools check demo bench clean
