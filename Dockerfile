# A plain transcription of scripts/lib/install-deps.sh + scripts/run for
# container users. Not built in CI (no Docker engine there).
FROM debian:bookworm AS build
WORKDIR /src
COPY scripts/lib/packages.txt scripts/lib/packages.txt
COPY scripts/lib/install-deps.sh scripts/lib/install-deps.sh
RUN scripts/lib/install-deps.sh scripts/lib/packages.txt
COPY . .
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
 && cmake --build build --target mailassay -j"$(nproc)"

FROM debian:bookworm-slim
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libcaf-core0.17 libcaf-io0.17 libfmt9 libhttp-parser2.9 libssl3 \
      libc-ares2 libsoci-core4.0 libsoci-sqlite3-4.0 libsoci-postgresql4.0 \
      libsqlite3-0 libpq5 libsodium23 libidn2-0 libpsl5 libspdlog1.10 \
      ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home /var/lib/mailassay --create-home mailassay
COPY --from=build /src/build/mailassay /usr/local/bin/mailassay
COPY --from=build /src/data/risk /usr/share/mailassay/risk
USER mailassay
WORKDIR /var/lib/mailassay
ENV MAILASSAY_HTTP_ADDRESS=0.0.0.0 MAILASSAY_HTTP_PORT=3000 \
    MAILASSAY_DATABASE_URL=sqlite:///var/lib/mailassay/data/mailassay.db \
    MAILASSAY_AUTH_JWT_SECRET_FILE=/var/lib/mailassay/data/jwt.secret
EXPOSE 3000
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/mailassay"]
CMD ["serve"]
