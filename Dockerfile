# svc as a container: the single binary, run as an unprivileged user, data on a volume.
#   docker build --build-arg SVC_BUILD_COMMIT=$(git rev-parse HEAD) -t svc .
# See docs/deployment.md.

FROM node:22-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
ARG SVC_BUILD_COMMIT=unknown
RUN SVC_BUILD_COMMIT=$SVC_BUILD_COMMIT npm run build

FROM debian:bookworm-slim
RUN groupadd --system --gid 10001 svc \
 && useradd --system --uid 10001 --gid svc --home-dir /var/lib/svc --shell /usr/sbin/nologin svc \
 && install -d -o svc -g svc -m 0700 /var/lib/svc /var/lib/svc/data
COPY --from=build /src/dist/svc /usr/local/bin/svc
USER svc
WORKDIR /var/lib/svc
ENV SVC_DATA_DIR=/var/lib/svc/data \
    SVC_HTTP=0.0.0.0:3000
VOLUME ["/var/lib/svc/data"]
EXPOSE 3000
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/svc"]
CMD ["serve"]
