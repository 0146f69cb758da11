# syntax=docker/dockerfile:1
# The Handoff image: a static binary on distroless, running as non-root.
#
#   docker build --build-arg VERSION=$(git describe --tags --always --dirty) -t handoff .
#
# e2e/docker_test.go runs this file's `go build` lines, as written, to keep
# the build stage honest where no container runtime runs.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/handoff ./cmd/handoff
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/handoff-demo ./cmd/handoff-demo
RUN mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/handoff /out/handoff-demo /usr/local/bin/
# The embedded SQLite default lives in the /data volume; set
# HANDOFF_DATABASE_URL=postgres://… to use PostgreSQL instead.
COPY --from=build --chown=nonroot:nonroot /out/data /data
VOLUME /data
ENV HANDOFF_DATABASE_URL=sqlite:///data/handoff.db \
    HANDOFF_ADDR=0.0.0.0:8080
USER nonroot:nonroot
EXPOSE 8080
# No shell or curl in the image: the binary asks its own /readyz.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["/usr/local/bin/handoff", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/handoff"]
CMD ["serve"]
