# A plain transcription of scripts/run for container users. Not built in CI
# (no Docker engine there); tests/packaging checks that both stages take
# their packages from scripts/lib/*.txt, so the lists cannot drift.
FROM debian:bookworm AS build
WORKDIR /src
COPY scripts/lib/packages.txt scripts/lib/packages.txt
COPY scripts/lib/install-deps.sh scripts/lib/install-deps.sh
RUN scripts/lib/install-deps.sh scripts/lib/packages.txt
COPY . .
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
 && cmake --build build --target mailassay -j"$(nproc)"

FROM debian:bookworm-slim
COPY scripts/lib/runtime-packages.txt scripts/lib/install-deps.sh /tmp/deps/scripts/lib/
RUN cd /tmp/deps && scripts/lib/install-deps.sh scripts/lib/runtime-packages.txt \
 && rm -rf /tmp/deps /var/lib/apt/lists/* \
 && useradd --system --home /var/lib/mailassay --create-home mailassay
COPY --from=build /src/build/mailassay /usr/local/bin/mailassay
COPY --from=build /src/data/risk /usr/share/mailassay/risk
USER mailassay
WORKDIR /var/lib/mailassay
ENV MAILASSAY_HTTP_ADDRESS=0.0.0.0 MAILASSAY_HTTP_PORT=3000 \
    MAILASSAY_DATABASE_URL=sqlite:///var/lib/mailassay/data/mailassay.db \
    MAILASSAY_RISK_DATA_DIR=/usr/share/mailassay/risk
EXPOSE 3000
# The binary is its own probe (no curl in the image): exit 0 when /health of
# the configured listener answers 200 within 3 s.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["/usr/local/bin/mailassay", "status", "--health"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/mailassay"]
CMD ["serve"]
