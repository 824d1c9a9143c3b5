# SPDX-License-Identifier: GPL-2.0
#
# pwthrottle. The kernel build reads ./Kbuild; this file is for people.
#
#   make                 build against the running kernel (KDIR to override)
#   make KVER=REL        build against a kernel fetched by scripts/fetch-kernel
#   make demo            the 2005 experiment in QEMU, stock vs pwthrottle
#   make check           everything: deps, kernels, W=1 builds, unit + VM tests
#   make check-debug     the VM suites on a lockdep + KASAN + kmemleak 6.12
#                        built from Debian's source (scripts/build-debug-kernel)
#   make bench           the full benchmark matrix into bench/results/
#   make unit            host unit tests only (ASan/UBSan), no VM
#   make lint            checkpatch, sparse, clang-format (scripts/lint)
#   make install         modules_install into /lib/modules/REL/extra + depmod
#   make uninstall       remove it again
#   make dkms-install    copy the sources to /usr/src/pwthrottle-VERSION and
#                        dkms add, build, install (rebuilt for new kernels)
#   make dkms-uninstall  dkms remove from every kernel, delete the sources
#   make sign KEY=K CERT=C   sign pwthrottle.ko (KO=...) with scripts/sign-file
#   make deb             the Debian packages pwthrottle-dkms and -tools
#                        (debian/), built from a copy in build/deb/src:
#                        build/deb/*.deb
#   make clean

PWT_CACHE ?= /var/tmp/pwthrottle
export PWT_CACHE
ifneq ($(KVER),)
KDIR ?= $(PWT_CACHE)/kernels/$(KVER)/build
else
KDIR ?= /lib/modules/$(shell uname -r)/build
endif

# The release KDIR's headers are for, as uname -r prints it. Not "make
# kernelrelease": Debian's 6.1 headers answer 6.1.x there, which would put
# the module in a directory no running kernel looks at.
KRELEASE = $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
		$(KDIR)/include/generated/utsrelease.h 2>/dev/null)
# kbuild's default changed from extra/ (6.1) to updates/ (6.12): pin it so
# uninstall knows where to look.
INSTALL_MOD_DIR ?= extra
export INSTALL_MOD_DIR
MODDIR = $(INSTALL_MOD_PATH)/lib/modules/$(KRELEASE)
DEPMOD ?= depmod
# kbuild's own depmod step skips itself without System.map, which headers
# packages do not ship, so run it ourselves.
DEPMOD_CMD = $(DEPMOD) $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) $(KRELEASE)

PWT_VERSION := $(shell sed -n 's/^PWT_VERSION *:= *//p' Kbuild)
DKMS ?= dkms
# dkms's source tree; DKMS_FLAGS go to every dkms call (e.g. --dkmstree),
# DKMS_KFLAGS to build and install (e.g. -k REL --kernelsourcedir DIR).
DKMS_SOURCE_TREE ?= /usr/src
DKMS_DIR = $(DKMS_SOURCE_TREE)/pwthrottle-$(PWT_VERSION)
DKMS_CMD = $(DKMS) --sourcetree $(DKMS_SOURCE_TREE) $(DKMS_FLAGS)

# make sign: the kernel's hash by default (Debian: sha256).
KO ?= pwthrottle.ko
SIG_HASH ?= sha256

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

# make check T="device writers": only these concerns (see scripts/check).
check:
	PWT_TESTS="$(T)" scripts/check

# Every VM suite, the torture scenarios included, on the debug kernel; any
# lockdep, KASAN, kmemleak, RCU or list report fails the suite's dmesg check.
DEBUG_TESTS ?= basic core device writers observe torture
check-debug:
	PWT_KERNELS=debug PWT_FULL=debug PWT_SERIAL=1 \
		PWT_VM_TIMEOUT=5400 PWT_BOOT_TIMEOUT=300 \
		PWT_TESTS="$(or $(T),$(DEBUG_TESTS))" scripts/check

lint:
	scripts/lint

install: module
	$(MAKE) -C $(KDIR) M=$(CURDIR) KERNELRELEASE=$(KRELEASE) modules_install
	$(DEPMOD_CMD)

uninstall:
	rm -f $(MODDIR)/$(INSTALL_MOD_DIR)/pwthrottle.ko*
	$(DEPMOD_CMD)

# Sources only: objects of an earlier "make" stay behind. A second
# dkms-install replaces the first.
dkms-install: dkms-uninstall
	mkdir -p $(DKMS_DIR)/module $(DKMS_DIR)/include
	cp Kbuild Makefile dkms.conf $(DKMS_DIR)/
	cp module/*.c module/*.h $(DKMS_DIR)/module/
	cp include/*.h $(DKMS_DIR)/include/
	$(DKMS_CMD) add -m pwthrottle -v $(PWT_VERSION)
	$(DKMS_CMD) build -m pwthrottle -v $(PWT_VERSION) $(DKMS_KFLAGS)
	$(DKMS_CMD) install -m pwthrottle -v $(PWT_VERSION) $(DKMS_KFLAGS)

dkms-uninstall:
	if [ -n "$$($(DKMS_CMD) status pwthrottle/$(PWT_VERSION))" ]; then \
		$(DKMS_CMD) remove pwthrottle/$(PWT_VERSION) --all; \
	fi
	rm -rf $(DKMS_DIR)

# Sign after anything that strips the module: stripping drops the signature.
sign:
	@if [ -z "$(KEY)" ] || [ -z "$(CERT)" ]; then \
		echo "usage: make sign KEY=key.pem CERT=cert.der [KO=pwthrottle.ko]" >&2; \
		exit 1; \
	fi
	$(KDIR)/scripts/sign-file $(SIG_HASH) $(KEY) $(CERT) $(KO)

# dpkg-buildpackage writes into the tree it builds and its parent, so it
# builds a copy of what the package ships. debian/changelog's version must
# be the module's (scripts/lint checks it too).
DEB_OUT = build/deb
DEB_SRC = $(DEB_OUT)/src/pwthrottle-$(PWT_VERSION)
deb:
	@v=$$(dpkg-parsechangelog -S Version); [ "$$v" = "$(PWT_VERSION)" ] || \
		{ echo "debian/changelog has $$v, Kbuild $(PWT_VERSION)" >&2; exit 1; }
	rm -rf $(DEB_OUT)/src $(DEB_OUT)/pwthrottle*_*
	mkdir -p $(DEB_SRC)/module $(DEB_SRC)/include
	mkdir -p $(DEB_SRC)/tools/pwtop
	cp -r Kbuild Makefile dkms.conf README.md packaging debian $(DEB_SRC)/
	cp module/*.c module/*.h $(DEB_SRC)/module/
	cp include/*.h $(DEB_SRC)/include/
	cp tools/pwtop/Makefile tools/pwtop/*.c tools/pwtop/*.h $(DEB_SRC)/tools/pwtop/
	cd $(DEB_SRC) && dpkg-buildpackage --no-sign
	mv $(DEB_OUT)/src/pwthrottle*_* $(DEB_OUT)/
	rm -rf $(DEB_OUT)/src

demo:
	scripts/demo

bench:
	scripts/bench

clean:
	rm -rf build
	rm -f *.o *.ko *.mod *.mod.c .*.cmd modules.order Module.symvers module/*.o module/.*.cmd

.PHONY: all module unit tools check check-debug demo bench lint install uninstall \
	dkms-install dkms-uninstall sign deb clean
