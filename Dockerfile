# Builds the single `deno compile` binary and ships it in a scratch image.
# The binary's permissions are fixed at compile time by the `ccm` permission set in deno.json.
FROM denoland/deno:2.9.6 AS build
WORKDIR /src
COPY deno.json deno.lock ./
RUN deno install --frozen
COPY . .
RUN deno task check \
 && deno compile -P=ccm --ignore-env --bundle --no-check \
      --output /out/linode-cloud-controller-manager main.ts \
 && mkdir -p /out/lib /out/lib64 \
 && for l in libc.so.6 libdl.so.2 libgcc_s.so.1 libm.so.6 libpthread.so.0 librt.so.1; do \
      cp "$(find /lib /usr/lib -name "$l" | head -1)" /out/lib/; \
    done \
 && cp /lib64/ld-linux-x86-64.so.2 /out/lib64/

FROM scratch
COPY --from=build /out/lib/ /lib/x86_64-linux-gnu/
COPY --from=build /out/lib64/ /lib64/
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/linode-cloud-controller-manager /linode-cloud-controller-manager
ENV DENO_TLS_CA_STORE=system,mozilla
USER 65534:65534
ENTRYPOINT ["/linode-cloud-controller-manager"]
