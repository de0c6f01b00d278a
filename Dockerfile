# syntax=docker/dockerfile:1
# The CCM as one `deno compile` binary on `scratch`: the binary, exactly the C libraries it links, the CA
# bundle, and nothing else (no shell, no package manager). The binary's permissions are the `ccm` set of
# deno.json with the --allow-net list below, fixed at compile time. tests/deploy_image_test.ts checks this file
# statically.

# Pinned to the Deno release the repository is tested with (.ci/run); pin the digest too when you mirror it:
# FROM denoland/deno:debian-2.9.6@sha256:<digest> AS build
FROM denoland/deno:debian-2.9.6 AS build
# What the runtime links: glibc's libraries and its loader, nothing else (the build stops otherwise, below).
ARG LINKED_LIBS="ld-linux-x86-64.so.2 libc.so.6 libdl.so.2 libgcc_s.so.1 libm.so.6 libpthread.so.0 librt.so.1"
ARG BINARY=/src/dist/linode-cloud-controller-manager
ARG ROOTFS=/rootfs
# The only hosts the binary may connect to or listen on (its --allow-net; docs/security.md): the Linode API, the
# apiserver as pods reach it (the `kubernetes` Service's ClusterIP: 10.96.0.1 with kubeadm's default service
# CIDR, 10.43.0.1 with k3s and RKE2; yours: kubectl get svc kubernetes -o jsonpath='{.spec.clusterIP}'), and
# the secure port. Another LINODE_URL, apiserver or --secure-port needs --build-arg CCM_ALLOW_NET=<host:port,...>;
# a server outside the list stops the CCM at start (exit 2) naming the setting. Must equal deploy/net-allow.default.
ARG CCM_ALLOW_NET="api.linode.com:443,10.96.0.1:443,10.43.0.1:443,0.0.0.0:10258"
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && test -s /etc/ssl/certs/ca-certificates.crt
WORKDIR /src
COPY deno.json deno.lock ./
RUN deno install --frozen
COPY . .
RUN deno task check \
 && printf '%s\n' "$CCM_ALLOW_NET" > deploy/net-allow \
 && deno task compile \
 && test -x "$BINARY"
# Record what the binary links (ldd), refuse a library LINKED_LIBS does not list or one it lists in vain,
# then copy the libraries named in that record to the paths where the dynamic linker found them.
RUN ldd "$BINARY" > "$BINARY.ldd" \
 && awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' "$BINARY.ldd" > "$BINARY.libs" \
 && test "$(xargs -n1 basename < "$BINARY.libs" | sort | tr '\n' ' ')" \
       = "$(printf '%s\n' $LINKED_LIBS | sort | tr '\n' ' ')" \
 && mkdir -p "$ROOTFS" \
 && xargs -I{} cp -L --parents {} "$ROOTFS/" < "$BINARY.libs"

FROM scratch
COPY --from=build /rootfs/ /
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /src/dist/linode-cloud-controller-manager /linode-cloud-controller-manager
ENV DENO_TLS_CA_STORE=system,mozilla
# The allocator settings of deploy/runtime-env (docs/operations.md#memory); must equal that file.
ENV MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=65536
USER 65534:65534
EXPOSE 10258
ENTRYPOINT ["/linode-cloud-controller-manager"]
