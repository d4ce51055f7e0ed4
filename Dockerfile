# knockwatch: one image, three roles (ingest, streams, notify), chosen by the command.
# Multi-stage: Maven builds the jar; the runtime is a JRE and the jar, run as a non-root user.

FROM maven:3.9.9-eclipse-temurin-17 AS build
WORKDIR /src
COPY . .
RUN mvn -B -q -Dstyle.color=never -DskipTests package -pl cli -am

FROM eclipse-temurin:17.0.15_6-jre
RUN useradd --system --uid 10001 --home-dir /opt/knockwatch knockwatch \
 && mkdir -p /var/lib/knockwatch /var/log/knockwatch \
 && chown knockwatch /var/lib/knockwatch
WORKDIR /opt/knockwatch
COPY --from=build /src/cli/target/knockwatch.jar /opt/knockwatch/knockwatch.jar
COPY alert-rules /opt/knockwatch/alert-rules
USER knockwatch
ENV KNOCKWATCH_METRICS_BIND=0.0.0.0
ENTRYPOINT ["java", "-XX:MaxRAMPercentage=75", "-jar", "/opt/knockwatch/knockwatch.jar"]
CMD ["--help"]
