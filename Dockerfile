# A plain transcription of scripts/run for container users (README, "Two
# commands"). scripts/check-image builds and runs it in CI (buildah, no
# daemon); tests/packaging checks that both stages take their packages from
# scripts/lib/*.txt, so the lists cannot drift.
FROM debian:bookworm AS build
WORKDIR /src
COPY scripts/lib/packages.txt scripts/lib/image-build-packages.txt scripts/lib/install-deps.sh scripts/lib/
RUN scripts/lib/install-deps.sh scripts/lib/packages.txt scripts/lib/image-build-packages.txt
COPY . .
# The compiler cache lives in /ccache: a folder of the build machine mounted
# there (`buildah bud --volume /var/cache/mailassay-ccache:/ccache`, as
# scripts/check-image does) keeps it between builds; without one it starts
# empty and the build is a plain one. CCACHE_BASEDIR makes its entries
# independent of the source's path.
ENV CCACHE_DIR=/ccache CCACHE_BASEDIR=/src CCACHE_MAXSIZE=2G
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
      -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
 && cmake --build build --target mailassay -j"$(nproc)" \
 && strip build/mailassay \
 && ccache --show-stats

# The runtime stage holds only the binary, its risk lists and the packages
# of scripts/lib/runtime-packages.txt.
FROM debian:bookworm-slim
COPY scripts/lib/runtime-packages.txt scripts/lib/install-deps.sh /tmp/deps/scripts/lib/
RUN cd /tmp/deps && scripts/lib/install-deps.sh scripts/lib/runtime-packages.txt \
 && rm -rf /tmp/deps /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/debconf/*-old \
      /var/log/apt /var/log/dpkg.log \
 && useradd --system --home /var/lib/mailassay --create-home mailassay \
 && install -d -o mailassay -g mailassay -m 0750 /var/lib/mailassay/data
COPY --from=build /src/build/mailassay /usr/local/bin/mailassay
COPY --from=build /src/data/risk /usr/share/mailassay/risk
USER mailassay
WORKDIR /var/lib/mailassay
ENV MAILASSAY_HTTP_ADDRESS=0.0.0.0 MAILASSAY_HTTP_PORT=3000 \
    MAILASSAY_DATABASE_URL=sqlite:///var/lib/mailassay/data/mailassay.db \
    MAILASSAY_RISK_DATA_DIR=/usr/share/mailassay/risk
# The database (SQLite) and the control socket; with PostgreSQL only the
# socket.
VOLUME /var/lib/mailassay/data
EXPOSE 3000
# The binary is its own probe (no curl in the image): exit 0 when /health of
# the configured listener answers 200 within 3 s.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["/usr/local/bin/mailassay", "status", "--health"]
# SIGTERM: requests in flight get up to 10 s (docs/operations.md,
# "Shutdown"); give the container at least 15 s before SIGKILL.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/mailassay"]
CMD ["serve"]
