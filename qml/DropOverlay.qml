// The window-wide drop target for GGUF files: highlighted while a drag hovers.
import QtQuick
import QtQuick.Controls

DropArea {
    id: root
    objectName: "dropArea"
    keys: ["text/uri-list"]

    Rectangle {
        objectName: "dropHighlight"
        anchors.fill: parent
        anchors.margins: 8
        visible: root.containsDrag
        color: Qt.rgba(palette.highlight.r, palette.highlight.g, palette.highlight.b, 0.12)
        border.color: palette.highlight
        border.width: 3
        radius: 12
        Label {
            anchors.centerIn: parent
            text: qsTr("Drop GGUF models to import them")
            font.pixelSize: 22
        }
    }
}
