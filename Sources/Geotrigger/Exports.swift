// The library users import: `import Geotrigger` brings every layer (GeotriggerRuntime, the
// package's internal support, comes along as their dependency; it is not part of the API).
@_exported import GeotriggerCore
@_exported import GeotriggerEngine
@_exported import GeotriggerFormats
@_exported import GeotriggerGeometry
@_exported import GeotriggerMonitoring
@_exported import GeotriggerOutput
@_exported import GeotriggerReplay
@_exported import GeotriggerScheduling
